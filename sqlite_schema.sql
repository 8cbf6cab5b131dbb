-- The trace contract between the simulator (which writes) and the app (which reads).
-- One SQLite file per run. Every table and column below carries a comment with its
-- meaning and unit; tests/test_schema.py fails when one is missing.
--
-- Vocabulary (Daisen's data abstraction): a *task* is one piece of work done at one
-- *location* (a component) between a start and an end time. Its *category* is what
-- Daisen calls "kind" and its *action* is Daisen's "what". Tasks form a tree whose
-- root is the simulation. A request between components is a `req_out` task at the
-- sender, lasting until the response arrives, with a `req_in` child at the receiver.
--
-- Time: every time is an INTEGER number of picoseconds, so tasks are placed exactly and
-- sub-nanosecond. Nothing is stored as floating seconds. Times are relative to the
-- trace's origin: the start of simulation for a simulator trace, the earliest event for
-- an imported one. The absolute origin (an epoch, a host clock) is run.time_origin on
-- run.clock, so a profile taken on a wall clock still fits in 63 bits of picoseconds.
--
-- Beyond the task tree: task_link (flows between tasks, such as a CPU launch to its GPU
-- kernel), instant (zero-length markers) and counter (a value over time at a location).
--
-- The task indexes are built after the bulk load (the INDEXES section, run at finalize);
-- the kernel records' are kept as their rows go in.

-- The trace format version, raised whenever a table or column changes meaning; readers
-- refuse other versions with a message instead of failing on a missing column.
-- Version 2 added task_link, instant, counter_series, counter, location.sort_index and
-- run.time_origin, run.clock, run.metadata; a version 1 file reads as one without them.
-- Version 3 added kernel_launch.valu_active_lanes and lds_active_lanes; a version 2 file
-- reads as one without them (no roofline).
PRAGMA user_version = 3;

-- Interned component names, such as GPU.SA[3].CU[12] or GPU.L2[5].
CREATE TABLE IF NOT EXISTS location (
    id INTEGER PRIMARY KEY,           -- location key used by task.location
    name TEXT NOT NULL UNIQUE,        -- hierarchical component name, dot separated
    task_count INTEGER,               -- number of tasks at this location (filled at finalize)
    busy_ps INTEGER,                  -- time with at least one task in flight, in ps (finalize)
    max_duration_ps INTEGER,          -- longest task duration here, in ps (finalize)
    short_duration_ps INTEGER,        -- every task here not in long_task lasts at most this long, in ps; bounds window queries (finalize)
    first_start_ps INTEGER,           -- earliest task start here, in ps (finalize)
    last_end_ps INTEGER,              -- latest task end here, in ps (finalize)
    pyramid_min_level INTEGER,        -- finest metric_bin level stored for this location (finalize)
    sort_index INTEGER                -- display rank from the source (Chrome process/thread sort indexes), 0 first; NULL: natural order by name
);

-- The few tasks of a location that last far longer than the rest (a kernel spanning the
-- run at the command processor). Listed apart, they leave window queries bounded by
-- location.short_duration_ps: tasks overlapping [t0, t1) are those with
-- start_ps >= t0 - short_duration_ps AND start_ps < t1 AND end_ps > t0, plus these.
CREATE TABLE IF NOT EXISTS long_task (
    location INTEGER NOT NULL,        -- location.id
    task INTEGER NOT NULL,            -- task.id of the long task
    start_ps INTEGER NOT NULL,        -- its start time, in ps
    end_ps INTEGER NOT NULL,          -- its end time, in ps
    PRIMARY KEY (location, start_ps, task)
) WITHOUT ROWID;

-- Interned (category, action) pairs: Daisen's (kind, what).
CREATE TABLE IF NOT EXISTS kind (
    id INTEGER PRIMARY KEY,           -- kind key used by task.kind
    category TEXT NOT NULL,           -- Daisen "kind": req_out, req_in, inst, wavefront, ...
    action TEXT NOT NULL,             -- Daisen "what": ReadReq, VALU, MapWGReq, ...
    UNIQUE (category, action)
);

-- Every traced task. Rows are written when a task ends, in large batches.
CREATE TABLE IF NOT EXISTS task (
    id INTEGER PRIMARY KEY,           -- integer task key, dense from 0 in creation order
    parent INTEGER,                   -- parent task key; NULL for the root or when the parent was not recorded
    kind INTEGER NOT NULL,            -- kind.id of this task's (category, action)
    location INTEGER NOT NULL,        -- location.id where the task ran
    start_ps INTEGER NOT NULL,        -- start time, in ps
    end_ps INTEGER NOT NULL,          -- end time, in ps (>= start_ps)
    flags INTEGER NOT NULL DEFAULT 0, -- bit 0: still open when the run stopped, end_ps is the stop time
    ext_id TEXT,                      -- original text ID from an imported trace; NULL means str(id)
    details TEXT                      -- task details as a JSON object, or NULL
);

-- Daisen's task steps (akita v5 "tags"): a named instant inside a task, such as read-hit.
CREATE TABLE IF NOT EXISTS task_tag (
    task INTEGER NOT NULL,            -- task.id the tag belongs to
    time_ps INTEGER NOT NULL,         -- when the step happened, in ps
    tag INTEGER NOT NULL              -- tag_name.id of the step's name
);

-- Interned task step names.
CREATE TABLE IF NOT EXISTS tag_name (
    id INTEGER PRIMARY KEY,           -- tag key used by task_tag.tag
    name TEXT NOT NULL UNIQUE         -- step name, such as read-hit or read-miss
);

-- Run metadata: one row per trace file.
CREATE TABLE IF NOT EXISTS run (
    id INTEGER PRIMARY KEY CHECK (id = 1), -- always 1: a trace file holds exactly one run
    simulator_version TEXT NOT NULL,  -- version of the program that wrote the file
    command TEXT NOT NULL,            -- command line that produced the trace
    workload TEXT,                    -- workload or source file name, such as transpose
    config TEXT NOT NULL,             -- full configuration as a JSON object
    seed INTEGER,                     -- random seed of the run, NULL when not applicable
    source TEXT NOT NULL,             -- 'simulator', or the importer used: akita-v3, akita-v4, daisen-csv, chrome
    virtual_start_ps INTEGER,         -- simulated start time, in ps
    virtual_end_ps INTEGER,           -- simulated end time, in ps
    wall_start TEXT NOT NULL,         -- wall-clock start of the run, ISO 8601 UTC
    wall_seconds REAL,                -- wall-clock duration of the run, in seconds
    completed INTEGER NOT NULL DEFAULT 0, -- 1 when the run finished normally, 0 if interrupted or still running
    finalized INTEGER NOT NULL DEFAULT 0, -- 1 once indexes and the metric pyramid are built
    open_tasks INTEGER NOT NULL DEFAULT 0, -- tasks still open at the stop and written with flags bit 0
    orphan_tasks INTEGER NOT NULL DEFAULT 0, -- tasks whose parent ID was not found (parent stored as NULL)
    pyramid_base_ps INTEGER,          -- width of a level-0 metric bin, in ps; level L bins are base << L wide
    time_origin TEXT,                 -- absolute time of relative time 0 on `clock`, as exact decimal seconds ('1751412255.332692737'); NULL for simulator traces
    clock TEXT,                       -- what time_origin counts from: 'unix' (seconds since 1970-01-01 UTC), 'simulation', or 'source' (the source's own clock, such as a host's monotonic clock); NULL for simulator traces
    metadata TEXT                     -- the source's other top-level metadata as a JSON object (Chrome: displayTimeUnit, deviceProperties, ...); a simulator run's {"note": what the run is for} (--note); NULL if none
);

-- Links between tasks beyond the tree: a flow from one task to another, such as a CPU-side
-- cudaLaunchKernel to the GPU kernel it launched (Chrome flow events; PyTorch's ac2g) or a
-- forward op to its backward op. A flow with steps (s, t, ..., f) is a chain of links.
CREATE TABLE IF NOT EXISTS task_link (
    src INTEGER NOT NULL,             -- task.id the link leaves (the earlier end: the launch)
    dst INTEGER NOT NULL,             -- task.id the link arrives at (the later end: the kernel)
    kind TEXT NOT NULL,               -- the flow's name or category, such as ac2g or fwdbwd
    PRIMARY KEY (src, dst, kind)
) WITHOUT ROWID;

-- Zero-length markers: Chrome instant events (ph i/I, async n), Kineto's memory events.
CREATE TABLE IF NOT EXISTS instant (
    id INTEGER PRIMARY KEY,           -- instant key, dense from 0 in input order
    location INTEGER,                 -- location.id it belongs to; NULL for a marker of the whole trace (Chrome scope g)
    time_ps INTEGER NOT NULL,         -- when it happened, in ps
    name TEXT NOT NULL,               -- the marker's name, such as [memory]
    category TEXT,                    -- the source's category of the marker, or NULL
    details TEXT                      -- its arguments as a JSON object, or NULL
);

-- Counter series: a named value over time at one location (Chrome ph C: one series per
-- event name and argument key).
CREATE TABLE IF NOT EXISTS counter_series (
    id INTEGER PRIMARY KEY,           -- series key used by counter.series
    location INTEGER NOT NULL,        -- location.id the counter belongs to
    name TEXT NOT NULL,               -- series name: event name, and argument key when it is not the only one ('memory.allocated')
    unit TEXT,                        -- unit of the values when the source says, such as bytes; NULL if unknown
    UNIQUE (location, name)
);

-- Counter samples: the series holds `value` from time_ps until its next sample.
CREATE TABLE IF NOT EXISTS counter (
    series INTEGER NOT NULL,          -- counter_series.id
    time_ps INTEGER NOT NULL,         -- when the value was sampled, in ps
    value NUMERIC NOT NULL,           -- the value (an integer stays exact, otherwise a double), in the series' unit
    PRIMARY KEY (series, time_ps)
) WITHOUT ROWID;

-- The metric pyramid: per location, per power-of-two time bin, the sums from which the six
-- Overview metrics follow exactly. Bin `bin` at level `level` covers the half-open interval
-- [bin * w, (bin + 1) * w) with w = run.pyramid_base_ps << level. A bin with no activity has
-- no row. Storing integrals rather than averages makes every level the exact sum of the one
-- below it. While a run is written, a bin goes into the file once it is final (every task
-- that can touch it has been seen), so a viewer can draw the run so far from these tables;
-- finalize writes the rest.
CREATE TABLE IF NOT EXISTS metric_bin (
    location INTEGER NOT NULL,        -- location.id
    level INTEGER NOT NULL,           -- pyramid level; bin width = pyramid_base_ps << level, in ps
    bin INTEGER NOT NULL,             -- bin index; the bin starts at bin * width ps
    req_in_started INTEGER NOT NULL,  -- req_in tasks starting in the bin (arrival rate = this / width)
    req_in_ended INTEGER NOT NULL,    -- req_in tasks ending in the bin (completion rate = this / width)
    req_in_latency_ps INTEGER NOT NULL, -- sum of durations of the req_in tasks ending in the bin, in ps
    task_ps INTEGER NOT NULL,         -- integral of the number of tasks in flight over the bin, in task*ps
    buffer_ps INTEGER NOT NULL,       -- integral of req_in tasks waiting (parent start .. own start), in task*ps
    req_out_ps INTEGER NOT NULL,      -- integral of req_out tasks in flight, in task*ps
    busy_ps INTEGER NOT NULL,         -- time in the bin with at least one task in flight, in ps
    PRIMARY KEY (location, level, bin)
) WITHOUT ROWID;

-- Per-category detail of the pyramid: what kinds of task fill each bin.
CREATE TABLE IF NOT EXISTS metric_kind_bin (
    location INTEGER NOT NULL,        -- location.id
    level INTEGER NOT NULL,           -- pyramid level, as in metric_bin
    bin INTEGER NOT NULL,             -- bin index, as in metric_bin
    kind INTEGER NOT NULL,            -- kind.id
    started INTEGER NOT NULL,         -- tasks of this kind starting in the bin
    task_ps INTEGER NOT NULL,         -- integral of tasks of this kind in flight over the bin, in task*ps
    PRIMARY KEY (location, level, bin, kind)
) WITHOUT ROWID;

-- KERNEL RECORDS (Klein's views). Written by simulator/kernels/records.py while the
-- workload's host program runs its kernels on real data. Work-items are identified by
-- their global linear id x + X*(y + Y*z) (X, Y: global sizes); work-groups by their
-- linear index in dispatch order; a wavefront is 64 consecutive work-items of a group.

-- Kernel programs: the source text a launch ran, with its annotations.
CREATE TABLE IF NOT EXISTS kernel_source (
    id INTEGER PRIMARY KEY,           -- program key used by kernel_launch.source and kernel_branch_node.source
    path TEXT NOT NULL,               -- file name the program was read from, such as reduction_v1.cl
    text TEXT NOT NULL,               -- the full source text; line numbers elsewhere are 1-based lines of it
    emits TEXT NOT NULL,              -- @emit declarations as a JSON list of {"name", "type", "length", "line"}
    binds TEXT NOT NULL               -- @bind chart specs as a JSON list of {"line", "class", "data": [emit names], ...}
);

-- Kernel launches (NDRanges) in launch order, with a summary of how they executed.
CREATE TABLE IF NOT EXISTS kernel_launch (
    id INTEGER PRIMARY KEY,           -- launch key, dense from 0 in launch order (KernelLaunch.launch_id)
    source INTEGER NOT NULL,          -- kernel_source.id of the program
    kernel TEXT NOT NULL,             -- kernel function name
    global_size TEXT NOT NULL,        -- global work size as a JSON list, work-items per dimension
    local_size TEXT NOT NULL,         -- work-group size as a JSON list, work-items per dimension
    work_groups INTEGER NOT NULL,     -- number of work-groups
    wavefronts INTEGER NOT NULL,      -- number of wavefronts (of up to 64 work-items)
    args TEXT NOT NULL,               -- arguments as a JSON object: name -> number, {"buffer", "base" (byte address), "bytes", "dtype"} or {"local": elements}
    lds_bytes INTEGER NOT NULL,       -- local memory per work-group, in bytes
    instructions INTEGER NOT NULL,    -- wavefront-instructions issued, all units, END excluded
    vector_instructions INTEGER NOT NULL, -- VALU, LDS and VMEM wavefront-instructions (the ones with lanes)
    active_lanes INTEGER NOT NULL,    -- sum of active lanes over vector_instructions (SIMD efficiency = this / 64 / vector_instructions)
    partial_instructions INTEGER NOT NULL, -- vector wavefront-instructions with fewer than 64 active lanes (divergence)
    lds_instructions INTEGER NOT NULL, -- LDS wavefront-instructions
    lds_conflicted INTEGER NOT NULL,  -- LDS wavefront-instructions with a bank-conflict degree above 1
    lds_max_degree INTEGER NOT NULL,  -- worst bank-conflict degree (1 = conflict free, 0 = no LDS access)
    watch_truncated INTEGER NOT NULL, -- 1 if kernel_access stopped at its limit for this launch
    branch_truncated INTEGER NOT NULL, -- 1 if branch bits stopped at their limit for this launch
    valu_active_lanes INTEGER NOT NULL DEFAULT 0, -- sum of active lanes over VALU wavefront-instructions alone: the launch's vector work, in lane-operations (the roofline's work)
    lds_active_lanes INTEGER NOT NULL DEFAULT 0 -- sum of active lanes over LDS wavefront-instructions: dword accesses to local memory (4 B each)
);

-- Memory objects of a launch: buffers, local and private arrays, and whether they are watched.
CREATE TABLE IF NOT EXISTS kernel_array (
    launch INTEGER NOT NULL,          -- kernel_launch.id
    name TEXT NOT NULL,               -- argument or array name as written in the source
    space TEXT NOT NULL,              -- global, constant, local or private
    elem_type TEXT NOT NULL,          -- element type, such as float or float4
    elem_bytes INTEGER NOT NULL,      -- bytes per element
    length INTEGER NOT NULL,          -- elements (per work-group for local, per work-item for private)
    base INTEGER NOT NULL,            -- byte address of element 0: global address, or offset in the group's LDS
    watched INTEGER NOT NULL          -- 1 if a @watch annotation named it
);

-- Every access to a @watch'ed array, per work-item, plus the barriers passed while watching.
CREATE TABLE IF NOT EXISTS kernel_access (
    launch INTEGER NOT NULL,          -- kernel_launch.id
    seq INTEGER NOT NULL,             -- issue order of the instruction in the launch; the lanes of one instruction share it
    epoch INTEGER NOT NULL,           -- logical time: barriers the work-group had passed before the access
    work_item INTEGER NOT NULL,       -- global linear id of the work-item (-1 on barrier rows, which are per work-group)
    work_group INTEGER NOT NULL,      -- linear work-group index
    local_id INTEGER NOT NULL,        -- linear id within the work-group (-1 on barrier rows)
    kind INTEGER NOT NULL,            -- 0 read, 1 write, 2 barrier (one row per work-group and barrier)
    line INTEGER NOT NULL,            -- source line of the statement
    array TEXT NOT NULL,              -- array name ('' on barrier rows)
    element INTEGER NOT NULL,         -- element index into the array (-1 on barrier rows)
    address INTEGER NOT NULL,         -- byte address: offset in the group's LDS for local arrays, global address otherwise (-1 on barrier rows)
    bank INTEGER NOT NULL             -- LDS bank, dword address mod 32 (-1 outside local memory and on barrier rows)
);

-- Klein's semantic model: one row per conditional or loop of a kernel, as a tree.
CREATE TABLE IF NOT EXISTS kernel_branch_node (
    source INTEGER NOT NULL,          -- kernel_source.id
    kernel TEXT NOT NULL,             -- kernel function name
    id INTEGER NOT NULL,              -- node number in source order from 0 (referenced by kernel_branch_pattern.nodes)
    parent INTEGER NOT NULL,          -- enclosing node id, -1 at the top level of the kernel
    branch TEXT NOT NULL,             -- part of the parent holding it: then, else or body ('' at top level)
    type TEXT NOT NULL,               -- 'if' (a bit per evaluation, 1 = taken) or 'loop' (a bit per test, 1 = iterate)
    line INTEGER NOT NULL,            -- first source line of the statement
    col INTEGER NOT NULL,             -- source column where the statement starts
    end_line INTEGER NOT NULL,        -- last source line of the statement
    PRIMARY KEY (source, kernel, id)
);

-- Distinct branch bit-streams of a launch (work-items that branched identically share one).
CREATE TABLE IF NOT EXISTS kernel_branch_pattern (
    launch INTEGER NOT NULL,          -- kernel_launch.id
    id INTEGER NOT NULL,              -- pattern number in order of first appearance
    bits TEXT NOT NULL,               -- the stream as '0'/'1' characters in evaluation order
    nodes TEXT NOT NULL,              -- comma-separated kernel_branch_node.id that produced each bit
    work_items INTEGER NOT NULL,      -- work-items with this stream
    PRIMARY KEY (launch, id)
);

-- Proxy warps: wavefronts whose lanes have identical patterns, lane by lane.
CREATE TABLE IF NOT EXISTS kernel_proxy_warp (
    launch INTEGER NOT NULL,          -- kernel_launch.id
    id INTEGER NOT NULL,              -- proxy number, largest group first
    wavefronts INTEGER NOT NULL,      -- wavefronts it stands for
    representative INTEGER NOT NULL,  -- lowest wavefront index in the group
    patterns TEXT NOT NULL,           -- JSON object: kernel_branch_pattern.id -> lanes taking it (the donut's regions)
    divergent INTEGER NOT NULL,       -- 1 if its lanes follow more than one pattern
    PRIMARY KEY (launch, id)
);

-- The branch stream of every work-item, by pattern.
CREATE TABLE IF NOT EXISTS kernel_branch (
    launch INTEGER NOT NULL,          -- kernel_launch.id
    work_item INTEGER NOT NULL,       -- global linear id of the work-item
    work_group INTEGER NOT NULL,      -- linear work-group index
    wavefront INTEGER NOT NULL,       -- wavefront index in the launch (work_group * wavefronts per group + local id // 64)
    lane INTEGER NOT NULL,            -- lane in the wavefront, 0..63
    pattern INTEGER NOT NULL,         -- kernel_branch_pattern.id
    proxy INTEGER NOT NULL            -- kernel_proxy_warp.id of its wavefront
);

-- Values recorded by @emit, per work-item index.
CREATE TABLE IF NOT EXISTS kernel_emit (
    launch INTEGER NOT NULL,          -- kernel_launch.id
    name TEXT NOT NULL,               -- @emit name
    idx INTEGER NOT NULL,             -- index: the work-item's global linear id, or the subscript written
    value REAL NOT NULL               -- the value (integers converted to REAL)
);

-- The picture under a 2-D launch: each global buffer argument with one element per
-- work-item (an image, such as Sobel's input), as the kernel saw it at launch.
CREATE TABLE IF NOT EXISTS kernel_image (
    launch INTEGER NOT NULL,          -- kernel_launch.id
    name TEXT NOT NULL,               -- the buffer argument's name
    width INTEGER NOT NULL,           -- pixels per row: the global size in x
    height INTEGER NOT NULL,          -- rows: the global size in y
    pixels BLOB NOT NULL,             -- width*height float32 values (unitless), little-endian, row by row
    PRIMARY KEY (launch, name)
);

-- Indexes of the kernel records, kept as rows go in: a launch's rows come after every
-- earlier launch's, sorted by the index's key (simulator/kernels/records.py), so each
-- goes in at the index's end, cheaper than a build at finalize (which would wait for it).
-- Memory view: one launch's watched accesses, group by group in issue order.
CREATE INDEX IF NOT EXISTS kernel_access_launch ON kernel_access (launch, work_group, seq);
-- Branching view: the work-items of a wavefront or a proxy warp.
CREATE INDEX IF NOT EXISTS kernel_branch_launch ON kernel_branch (launch, proxy, wavefront);
-- Debug view: one emitted series.
CREATE INDEX IF NOT EXISTS kernel_emit_launch ON kernel_emit (launch, name, idx);

-- INDEXES (created at finalize, after the load)
-- Component view: the tasks of one location in a time window (with location.max_duration_ps).
CREATE INDEX IF NOT EXISTS task_location_start ON task (location, start_ps);
-- Task view: the subtasks of a task.
CREATE INDEX IF NOT EXISTS task_parent ON task (parent);
-- Tags of one task, in time order.
CREATE INDEX IF NOT EXISTS task_tag_task ON task_tag (task, time_ps);
-- Task view: the links arriving at a task (those leaving it use the primary key).
CREATE INDEX IF NOT EXISTS task_link_dst ON task_link (dst);
-- Component view: the markers of one location in a time window.
CREATE INDEX IF NOT EXISTS instant_location_time ON instant (location, time_ps);
