# cython: language_level=3
"""Chrome slices read in blocks, in C (``slices.py`` is the reference and says what is read).

The event array's text is read in place, a character at a time, without building a
Python object per key or value: a slice costs what its name, IDs and details cost as
Python values, about a microsecond less than decoding it as JSON and staging it field by
field. Times are read as exact decimals into 128-bit integers. Only the text of a buffer
of one byte per character (Latin-1, so any ASCII file) is read here; a shape this reader
does not know (an escaped string, an exponent, more than six decimals of a time, a
repeated key, details with non-ASCII text) is left to the event-by-event reader. Slices
of our own export (``own``) are read with the identities their ``args`` carry.
"""
import numpy as np

from .slices import DECLINED, FULL, MORE, Slices

cimport cython
from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memcmp, strlen
from cython.operator cimport dereference as deref
from libcpp.algorithm cimport sort as cpp_sort
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from libcpp.vector cimport vector


cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    object PyUnicode_DecodeASCII(const char *data, Py_ssize_t size, const char *errors)
    int PyUnicode_1BYTE_KIND


cdef extern from *:
    """
    typedef __int128 int128;
    static const int64_t MAX64 = 9223372036854775807LL;
    static int fits64(int128 v) { return v >= -(int128)MAX64 && v <= (int128)MAX64; }
    """
    ctypedef long long int128
    int64_t MAX64
    bint fits64(int128 v)


DEF MAX_DEPTH = 32  # details nested deeper go the other way (the JSON reader's limit decides)
DEF MAX_TIME_DIGITS = 30
DEF MAX_INT_DIGITS = 100
# Results of reading one value or event.
DEF OK = 0
DEF NO = 1    # not this reader's: the event-by-event reader takes it
DEF CUT = 2   # the buffer ends first
DEF AGAIN = 3  # an object's or array's next item follows

cdef int64_t TEN6 = 1000000


cdef struct Field:
    Py_ssize_t start, end  # a string's characters (between the quotes)
    bint found, is_null, is_text
    int64_t number   # pid/tid when not text


@cython.final
cdef class _Scanner:
    cdef const uint8_t *s
    cdef Py_ssize_t n, p
    cdef Py_ssize_t line, line_start  # line number at p, and the offset its line starts at
    cdef bint bind  # the details read name a flow ("bind_id" at their top level)

    cdef inline void space(self) noexcept:
        cdef uint8_t c
        while self.p < self.n:
            c = self.s[self.p]
            if c == 32 or c == 9 or c == 13:
                self.p += 1
            elif c == 10:
                self.p += 1
                self.line += 1
                self.line_start = self.p
            else:
                return

    cdef int text(self, Py_ssize_t *start, Py_ssize_t *end, bint printable) noexcept:
        """A string without escapes at p (after its opening quote is checked here)."""
        cdef uint8_t c
        if self.p >= self.n:
            return CUT
        if self.s[self.p] != 34:
            return NO
        self.p += 1
        start[0] = self.p
        while self.p < self.n:
            c = self.s[self.p]
            if c == 34:
                end[0] = self.p
                self.p += 1
                return OK
            if c == 92 or c < 32 or (printable and c > 126):
                return NO
            self.p += 1
        return CUT

    cdef int number(self, Py_ssize_t *int_end, Py_ssize_t *frac_end, bint *exponent) noexcept:
        """A JSON number at p: its integer part ends at int_end, its fraction (if any) at
        frac_end (== int_end without one)."""
        cdef Py_ssize_t q = self.p
        if q < self.n and self.s[q] == 45:
            q += 1
        if q >= self.n:
            return CUT
        if self.s[q] == 48:
            q += 1
        elif 49 <= self.s[q] <= 57:
            while q < self.n and 48 <= self.s[q] <= 57:
                q += 1
        else:
            return NO
        int_end[0] = q
        if q < self.n and self.s[q] == 46:
            q = self.digits(q + 1)
            if q < 0:
                return -q
        frac_end[0] = q
        exponent[0] = False
        if q < self.n and (self.s[q] == 101 or self.s[q] == 69):
            exponent[0] = True
            q += 1
            if q < self.n and (self.s[q] == 43 or self.s[q] == 45):
                q += 1
            q = self.digits(q)
            if q < 0:
                return -q
        if q >= self.n:
            return CUT  # a number may go on in the next buffer
        self.p = q
        return OK

    cdef Py_ssize_t digits(self, Py_ssize_t q) noexcept:
        """Past the one or more digits at q; -NO where there is none, -CUT at the end."""
        if q >= self.n:
            return -CUT
        if not 48 <= self.s[q] <= 57:
            return -NO
        while q < self.n and 48 <= self.s[q] <= 57:
            q += 1
        return q

    cdef int time(self, int128 *ps) noexcept:
        """A time in µs as exact ps (at most six decimals, no exponent)."""
        cdef Py_ssize_t first = self.p, int_end, frac_end
        cdef bint exponent, negative
        cdef int rc = self.number(&int_end, &frac_end, &exponent), digits, frac
        cdef int128 value
        if rc != OK:
            return rc
        if exponent or frac_end - int_end - 1 > 6:
            return NO
        negative = self.s[first] == 45
        if int_end - first - negative > MAX_TIME_DIGITS:
            return NO
        value = _whole(self.s, first + negative, int_end) * TEN6
        if frac_end > int_end:
            frac = <int>_whole(self.s, int_end + 1, frac_end)
            digits = 6 - <int>(frac_end - int_end - 1)
            while digits > 0:
                frac *= 10
                digits -= 1
            value += frac
        ps[0] = -value if negative else value
        return OK

    cdef int key(self, Py_ssize_t *start, Py_ssize_t *end) noexcept:
        """An object member's key at p, after any space (a string without escapes)."""
        self.space()
        return self.text(start, end, False)

    cdef int value(self) noexcept:
        """Past the ':' after a member's key, at its value's first character."""
        cdef int rc = self.expect(58)
        self.space()
        if rc == OK and self.p >= self.n:
            rc = CUT
        return rc

    cdef int expect(self, uint8_t c) noexcept:
        """Past ``c``, after any space."""
        self.space()
        if self.p >= self.n:
            return CUT
        if self.s[self.p] != c:
            return NO
        self.p += 1
        return OK

    cdef int opened(self, uint8_t close) noexcept:
        """Just inside an object or array: OK past ``close`` (it is empty), or AGAIN."""
        self.space()
        if self.p >= self.n:
            return CUT
        if self.s[self.p] == close:
            self.p += 1
            return OK
        return AGAIN

    cdef int next_item(self, uint8_t close) noexcept:
        """After an item of an object or array: AGAIN past a ',', OK past ``close``."""
        self.space()
        if self.p >= self.n:
            return CUT
        self.p += 1
        if self.s[self.p - 1] == 44:
            return AGAIN
        return OK if self.s[self.p - 1] == close else NO

    cdef int begin(self, int depth) noexcept:
        """Past the space before a value: its first character, or -NO for one nested deeper
        than ``MAX_DEPTH``, -CUT where the buffer ends."""
        if depth > MAX_DEPTH:
            return -NO
        self.space()
        return self.s[self.p] if self.p < self.n else -CUT

    cdef int skip(self, int depth) noexcept:
        """Any JSON value at p (strings may hold escapes)."""
        cdef int c = self.begin(depth), rc
        cdef uint8_t close
        cdef Py_ssize_t a, b
        cdef bint exponent
        if c < 0:
            return -c
        if c == 34:
            self.p += 1
            while self.p < self.n:
                c = self.s[self.p]
                if c == 34:
                    self.p += 1
                    return OK
                if c < 32:
                    return NO
                if c == 92:
                    rc = self.escape()
                    if rc != OK:
                        return rc
                else:
                    self.p += 1
            return CUT
        if c == 123 or c == 91:
            close = 125 if c == 123 else 93
            self.p += 1
            rc = self.opened(close)
            while rc == AGAIN:
                if c == 123:  # a key: a string
                    self.space()
                    if self.p >= self.n:
                        return CUT
                    rc = self.skip(depth + 1) if self.s[self.p] == 34 else NO
                    if rc == OK:
                        rc = self.expect(58)
                if rc == OK or c == 91:
                    rc = self.skip(depth + 1)
                if rc == OK:
                    rc = self.next_item(close)
            return rc
        if c == 45 or 48 <= c <= 57:
            return self.number(&a, &b, &exponent)
        return self.literal()

    cdef int escape(self) noexcept:
        """A JSON escape at p (its backslash)."""
        cdef Py_ssize_t k
        cdef uint8_t c
        if self.p + 1 >= self.n:
            return CUT
        c = self.s[self.p + 1]
        if c == 117:  # \uXXXX
            if self.p + 6 > self.n:
                return CUT
            for k in range(self.p + 2, self.p + 6):
                c = self.s[k]
                if not (48 <= c <= 57 or 65 <= c <= 70 or 97 <= c <= 102):
                    return NO
            self.p += 6
            return OK
        if c in b'"\\/bfnrt':
            self.p += 2
            return OK
        return NO

    cdef int literal(self) noexcept:
        """true, false or null at p."""
        cdef const char *word
        cdef Py_ssize_t size
        cdef uint8_t c = self.s[self.p]
        if c == 116:
            word, size = b"true", 4
        elif c == 102:
            word, size = b"false", 5
        elif c == 110:
            word, size = b"null", 4
        else:
            return NO
        if self.p + size > self.n:
            return CUT if memcmp(self.s + self.p, word, self.n - self.p) == 0 else NO
        if memcmp(self.s + self.p, word, size) != 0:
            return NO
        self.p += size
        return OK

    cdef int details(self, string *out, int depth) noexcept:
        """The value at p as ``values.details_json`` writes it: keys sorted, ", " and ": "
        between items, decimals as strings, text ASCII only."""
        cdef int c = self.begin(depth), rc
        cdef Py_ssize_t a, b, int_end, frac_end, first
        cdef bint exponent
        cdef vector[pair[string, string]] items
        cdef pair[string, string] item
        cdef string value
        cdef size_t i
        if c < 0:
            return -c
        if c == 34:
            rc = self.text(&a, &b, True)
            if rc == OK:
                out.push_back(34)
                out.append(<const char *>self.s + a, b - a)
                out.push_back(34)
            return rc
        if c == 45 or 48 <= c <= 57:
            first = self.p
            rc = self.number(&int_end, &frac_end, &exponent)
            if rc != OK:
                return rc
            if exponent or int_end - first > MAX_INT_DIGITS:
                return NO
            if frac_end == int_end:  # an int: as Python prints it ("-0" is 0)
                if int_end - first == 2 and self.s[first] == 45 and self.s[first + 1] == 48:
                    out.push_back(48)
                else:
                    out.append(<const char *>self.s + first, int_end - first)
                return OK
            if not _plain_decimal(self.s, first, int_end, frac_end):
                return NO
            out.push_back(34)  # a Decimal, which the encoder writes as its str
            out.append(<const char *>self.s + first, frac_end - first)
            out.push_back(34)
            return OK
        if c == 91:
            self.p += 1
            out.push_back(91)
            rc = self.opened(93)
            while rc == AGAIN:
                rc = self.details(out, depth + 1)
                if rc == OK:
                    rc = self.next_item(93)
                    if rc == AGAIN:
                        out.append(b", ")
            if rc == OK:
                out.push_back(93)
            return rc
        if c == 123:
            self.p += 1
            rc = self.opened(125)
            while rc == AGAIN:
                self.space()
                rc = self.text(&a, &b, True)
                if rc == OK:
                    item.first.assign(<const char *>self.s + a, b - a)
                    if depth == 1 and b - a == 7 and memcmp(self.s + a, b"bind_id", 7) == 0:
                        self.bind = True
                    rc = self.expect(58)
                if rc == OK:
                    value.clear()
                    rc = self.details(&value, depth + 1)
                if rc == OK:
                    item.second = value
                    items.push_back(item)
                    rc = self.next_item(125)
            if rc != OK:
                return rc
            cpp_sort(items.begin(), items.end())
            out.push_back(123)
            for i in range(items.size()):
                if i and items[i].first == items[i - 1].first:
                    return NO  # a repeated key: the last one would win
                if i:
                    out.append(b", ")
                out.push_back(34)
                out.append(items[i].first)
                out.append(b"\": ")
                out.append(items[i].second)
            out.push_back(125)
            return OK
        first = self.p
        rc = self.literal()
        if rc == OK:
            out.append(<const char *>self.s + first, self.p - first)
        return rc


cdef int128 _whole(const uint8_t *s, Py_ssize_t a, Py_ssize_t b) noexcept:
    """The digits s[a:b] as a number (at most 38 of them)."""
    cdef int128 value = 0
    while a < b:
        value = value * 10 + (s[a] - 48)
        a += 1
    return value


cdef bint _plain_decimal(const uint8_t *s, Py_ssize_t first, Py_ssize_t int_end,
                         Py_ssize_t frac_end) noexcept:
    """Whether ``str(Decimal(text))`` is the text itself: no exponent notation, which
    Decimal uses when a fraction's first digit lies more than six places in."""
    cdef Py_ssize_t q = first + (s[first] == 45), zeros = 0
    if not (int_end - q == 1 and s[q] == 48):
        return True  # a whole part other than 0
    q = int_end + 1
    while q < frac_end and s[q] == 48:
        zeros += 1
        q += 1
    if q == frac_end:
        return frac_end - int_end - 1 <= 6  # 0.000000 (six zeros) stays plain, 0E-7 does not
    return zeros <= 5


cdef extern from *:
    """
    /* The keys of an event this reader reads, each a bit; -1: a flow's (not its events). */
    enum {K_PH = 1, K_NAME = 2, K_CAT = 4, K_TS = 8, K_DUR = 16, K_PID = 32, K_TID = 64,
          K_ARGS = 128};
    static const char *const KEY_NAMES[] = {"ph", "ts", "cat", "dur", "pid", "tid", "name",
                                            "args", "bind_id", "flow_in", "flow_out"};
    static const int KEY_BITS[] = {K_PH, K_TS, K_CAT, K_DUR, K_PID, K_TID, K_NAME, K_ARGS,
                                   -1, -1, -1};
    static const int N_KEYS = 11;
    static const char *const OWN_KEYS[] = {"id", "parent", "category", "location", "details"};
    """
    int K_PH, K_NAME, K_CAT, K_TS, K_DUR, K_PID, K_TID, K_ARGS, N_KEYS
    const char *const KEY_NAMES[]
    const int KEY_BITS[]
    const char *const OWN_KEYS[]


cdef int _named(const uint8_t *s, Py_ssize_t a, Py_ssize_t b, const char *const *names,
                int count) noexcept:
    """The index of the text s[a:b] in ``names``, -1 if it is none of them."""
    cdef int i
    for i in range(count):
        if strlen(names[i]) == <size_t>(b - a) and memcmp(s + a, names[i], b - a) == 0:
            return i
    return -1


cdef int _key(const uint8_t *s, Py_ssize_t a, Py_ssize_t b) noexcept:
    """The bit of a key this reader reads, 0 for a key it skips, -1 for a flow key."""
    cdef int i = _named(s, a, b, KEY_NAMES, N_KEYS)
    return KEY_BITS[i] if i >= 0 else 0


cdef struct Event:
    Py_ssize_t name_a, name_b, cat_a, cat_b
    bint has_cat
    int128 ts, dur
    Field pid, tid
    bint has_details
    # Our own export's identity (``own``): args.id, args.parent, args.location, args.category.
    Field id, parent, location, category


cdef int _own_args(_Scanner sc, Event *e, string *details) noexcept:
    """The ``args`` object at p of a slice of our own export: the keys ``id``, ``location``
    (text), ``parent`` (text or null), ``category`` (text) and ``details``, nothing else."""
    cdef int rc, which
    cdef Py_ssize_t a, b
    cdef Field *f
    e.id.found = e.parent.found = e.location.found = e.category.found = False
    sc.p += 1  # the '{'
    rc = sc.opened(125)
    while rc == AGAIN:
        rc = sc.key(&a, &b)
        if rc != OK:
            return rc
        which = _named(sc.s, a, b, OWN_KEYS, 5)  # id, parent, category, location, details
        if which < 0:
            return NO
        rc = sc.value()
        if rc != OK:
            return rc
        if which == 4:  # details
            if e.has_details or details.size():
                return NO  # a repeated key
            if sc.s[sc.p] == 110:
                rc = sc.literal()
                details.append(b"null")
            else:
                rc = sc.details(details, 2)
                e.has_details = True
        else:
            f = &e.id if which == 0 else &e.parent if which == 1 else \
                &e.category if which == 2 else &e.location
            if f.found:
                return NO  # a repeated key
            f.found = True
            f.is_null = which == 1 and sc.s[sc.p] == 110
            rc = sc.literal() if f.is_null else sc.text(&f.start, &f.end, False)
        if rc == OK:
            rc = sc.next_item(125)
    if rc != OK:
        return rc
    return OK if e.id.found and e.location.found else NO


cdef int _event(_Scanner sc, Event *e, string *details, bint own) noexcept:
    """One event object at p, if it is a plain slice (``own``: of our own export)."""
    cdef int seen = 0, bit, rc
    cdef Py_ssize_t a, b
    cdef Field *f
    cdef uint8_t c
    details.clear()
    e.has_cat = False
    e.has_details = False
    e.pid.found = e.tid.found = False
    sc.p += 1  # the '{'
    rc = sc.opened(125)
    if rc == OK:
        return NO  # an empty object
    while rc == AGAIN:
        rc = sc.key(&a, &b)
        if rc != OK:
            return rc
        bit = _key(sc.s, a, b)
        if bit < 0 or (bit & seen):
            return NO
        seen |= bit
        rc = sc.value()
        if rc != OK:
            return rc
        c = sc.s[sc.p]
        if bit == K_PH:
            rc = sc.text(&a, &b, False)
            if rc == OK and not (b - a == 1 and sc.s[a] == 88):
                return NO
        elif bit == K_NAME:
            rc = sc.text(&e.name_a, &e.name_b, False)
        elif bit == K_CAT:
            if c == 110:
                rc = sc.literal()
            else:
                rc = sc.text(&e.cat_a, &e.cat_b, False)
                e.has_cat = True
        elif bit == K_TS:
            rc = sc.time(&e.ts)
        elif bit == K_DUR:
            rc = sc.time(&e.dur)
        elif bit == K_PID or bit == K_TID:
            f = &e.pid if bit == K_PID else &e.tid
            f.found = True
            if c == 34:
                f.is_text = True
                rc = sc.text(&f.start, &f.end, False)
            else:
                f.is_text = False
                rc = _int64(sc, &f.number)
        elif bit == K_ARGS:
            if own:
                if c != 123:
                    return NO
                rc = _own_args(sc, e, details)
            elif c == 110:
                rc = sc.literal()
            elif c == 123:
                sc.bind = False
                rc = sc.details(details, 1)
                if rc == OK and sc.bind:
                    return NO
                e.has_details = details.size() > 2
            else:
                return NO
        else:
            rc = sc.skip(1)
        if rc == OK:
            rc = sc.next_item(125)
    if rc != OK:
        return rc
    if (seen & (K_PH | K_NAME | K_TS | K_DUR)) != (K_PH | K_NAME | K_TS | K_DUR):
        return NO
    if own and not (seen & K_ARGS):
        return NO
    return OK


cdef int _int64(_Scanner sc, int64_t *value) noexcept:
    """A JSON integer at p that fits 64 bits."""
    cdef Py_ssize_t first = sc.p, int_end, frac_end
    cdef bint exponent, negative
    cdef int rc = sc.number(&int_end, &frac_end, &exponent)
    cdef int128 v
    if rc != OK:
        return rc
    if exponent or frac_end != int_end or int_end - first > 19:
        return NO
    negative = sc.s[first] == 45
    v = _whole(sc.s, first + negative, int_end)
    if negative:
        v = -v
    if not fits64(v):
        return NO
    value[0] = <int64_t>v
    return OK


def scan(str buf, Py_ssize_t pos, base, Py_ssize_t limit, Py_ssize_t line, Py_ssize_t line_start,
         bint own=False):
    """As ``slices.scan``."""
    cdef _Scanner sc = _Scanner()
    cdef Event e
    cdef string details
    cdef vector[int64_t] starts, ends, lines, columns, thread, kind, location
    cdef unordered_map[string, int64_t] threads, kinds, locations
    cdef unordered_map[string, int64_t].iterator found
    cdef string key
    cdef int rc, why = FULL
    cdef bint after_event = False, have_base = base is not None
    cdef int128 base_ps = 0, start, end
    cdef Py_ssize_t event_start, save_line, save_line_start, count = 0
    if PyUnicode_KIND(buf) != PyUnicode_1BYTE_KIND:
        return pos, False, DECLINED, base, line, line_start, None
    if have_base:
        if not -10 ** 36 < base < 10 ** 36:
            return pos, False, DECLINED, base, line, line_start, None
        base_ps = (<int128>(<int64_t>(base // 10 ** 18))) * 1000000000000000000 + <int64_t>(base % 10 ** 18)
    sc.s = <const uint8_t *>PyUnicode_DATA(buf)
    sc.n = PyUnicode_GET_LENGTH(buf)
    sc.p, sc.line, sc.line_start = pos, line, line_start
    out = Slices()
    texts = out.details
    while count < limit:
        sc.space()
        if sc.p >= sc.n or sc.s[sc.p] != 123:
            why = MORE if sc.p >= sc.n else DECLINED
            break
        event_start, save_line, save_line_start = sc.p, sc.line, sc.line_start
        rc = _event(sc, &e, &details, own)
        if rc == OK:
            if e.dur < 0:
                rc = NO
            elif have_base:
                start = e.ts - base_ps
                end = start + e.dur
                if not fits64(start) or not fits64(end):
                    rc = NO
            else:
                start, end = 0, e.dur
                if not fits64(end):
                    rc = NO
        if rc != OK:
            why = MORE if rc == CUT else DECLINED
            sc.p, sc.line, sc.line_start = event_start, save_line, save_line_start
            break
        if not have_base:
            base_ps, have_base = e.ts, True
            base = _to_python(e.ts)
        key.clear()
        _id_key(sc, &e.pid, &key)
        _id_key(sc, &e.tid, &key)
        found = threads.find(key)
        if found == threads.end():
            threads[key] = len(out.threads)
            thread.push_back(len(out.threads))
            out.threads.append((_id(sc, &e.pid), _id(sc, &e.tid)))
        else:
            thread.push_back(deref(found).second)
        if own:
            _own_identity(sc, &e, out, locations, location)
        key.clear()
        if own and e.category.found:
            e.has_cat, e.cat_a, e.cat_b = True, e.category.start, e.category.end
        if e.has_cat:
            key.append(<const char *>sc.s + e.cat_a, e.cat_b - e.cat_a)
        elif not own:
            key.append(b"event")
        key.push_back(0)  # no string read here holds a NUL
        key.append(<const char *>sc.s + e.name_a, e.name_b - e.name_a)
        found = kinds.find(key)
        if found == kinds.end():
            kinds[key] = len(out.kinds)
            kind.push_back(len(out.kinds))
            out.kinds.append((_latin1(sc, e.cat_a, e.cat_b) if e.has_cat else "" if own else "event",
                              _latin1(sc, e.name_a, e.name_b)))
        else:
            kind.push_back(deref(found).second)
        texts.append(PyUnicode_DecodeASCII(details.c_str(), details.size(), NULL) if e.has_details else None)
        starts.push_back(<int64_t>start)
        ends.push_back(<int64_t>end)
        lines.push_back(save_line)
        columns.push_back(event_start - save_line_start + 1)
        count += 1
        sc.space()
        if sc.p < sc.n and sc.s[sc.p] == 44:
            sc.p += 1
        else:
            why, after_event = (MORE if sc.p >= sc.n else DECLINED), True
            break
    if not count:
        return sc.p, after_event, why, base, sc.line, sc.line_start, None
    out.thread, out.kind = _array(thread), _array(kind)
    if own:
        out.location = _array(location)
    out.starts, out.ends = _array(starts), _array(ends)
    out.lines, out.columns = _array(lines), _array(columns)
    return sc.p, after_event, why, base, sc.line, sc.line_start, out


cdef int _own_identity(_Scanner sc, Event *e, out, unordered_map[string, int64_t] &locations,
                       vector[int64_t] &location) except -1:
    """A slice of our own export: its ID and parent's into ``out``, its location's index."""
    cdef string key
    cdef unordered_map[string, int64_t].iterator found
    out.ext_ids.append(_latin1(sc, e.id.start, e.id.end))
    out.parents.append(None if not e.parent.found or e.parent.is_null
                       else _latin1(sc, e.parent.start, e.parent.end))
    key.assign(<const char *>sc.s + e.location.start, e.location.end - e.location.start)
    found = locations.find(key)
    if found == locations.end():
        locations[key] = len(out.locations)
        location.push_back(len(out.locations))
        out.locations.append(_latin1(sc, e.location.start, e.location.end))
    else:
        location.push_back(deref(found).second)
    return 0


cdef void _id_key(_Scanner sc, Field *f, string *key):
    """Append a pid's or tid's identity to ``key``: its kind (absent means 0), then its
    text's length and text, or its 8 bytes."""
    cdef Py_ssize_t length
    cdef int64_t value
    if f.found and f.is_text:
        length = f.end - f.start
        key.push_back(2)
        key.append(<const char *>&length, sizeof(Py_ssize_t))
        key.append(<const char *>sc.s + f.start, length)
    else:
        value = f.number if f.found else 0
        key.push_back(1)
        key.append(<const char *>&value, sizeof(int64_t))


cdef object _latin1(_Scanner sc, Py_ssize_t a, Py_ssize_t b):
    """Characters a..b-1 of the buffer as a str."""
    return PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, sc.s + a, b - a)


cdef object _id(_Scanner sc, Field *f):
    if not f.found:
        return 0
    if f.is_text:
        return _latin1(sc, f.start, f.end)
    return f.number


cdef object _to_python(int128 v):
    """A 128-bit integer as a Python int."""
    cdef bint negative = v < 0
    if negative:
        v = -v
    high = <int64_t>(v // 1000000000000000000)
    low = <int64_t>(v % 1000000000000000000)
    value = high * 10 ** 18 + low
    return -value if negative else value


cdef object _array(vector[int64_t] &values):
    if not values.size():
        return np.empty(0, dtype=np.int64)
    return np.array(<int64_t[:values.size()]>values.data())
