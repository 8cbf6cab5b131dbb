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
-- Time: every time is an INTEGER number of picoseconds of simulated time, so tasks
-- are placed exactly and sub-nanosecond. Nothing is stored as floating seconds.
--
-- Indexes are built after the bulk load (see the INDEXES section, run at finalize).

-- Interned component names, such as GPU.SA[3].CU[12] or GPU.L2[5].
CREATE TABLE IF NOT EXISTS location (
    id INTEGER PRIMARY KEY,           -- location key used by task.location
    name TEXT NOT NULL UNIQUE,        -- hierarchical component name, dot separated
    task_count INTEGER,               -- number of tasks at this location (filled at finalize)
    busy_ps INTEGER,                  -- time with at least one task in flight, in ps (finalize)
    max_duration_ps INTEGER,          -- longest task duration here, in ps; bounds window queries (finalize)
    first_start_ps INTEGER,           -- earliest task start here, in ps (finalize)
    last_end_ps INTEGER,              -- latest task end here, in ps (finalize)
    pyramid_min_level INTEGER         -- finest metric_bin level stored for this location (finalize)
);

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
    pyramid_base_ps INTEGER           -- width of a level-0 metric bin, in ps; level L bins are base << L wide
);

-- The metric pyramid: per location, per power-of-two time bin, the sums from which the six
-- Overview metrics follow exactly. Bin `bin` at level `level` covers the half-open interval
-- [bin * w, (bin + 1) * w) with w = run.pyramid_base_ps << level. A bin with no activity has
-- no row. Storing integrals rather than averages makes every level the exact sum of the one
-- below it.
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

-- INDEXES (created at finalize, after the load)
-- Component view: the tasks of one location in a time window (with location.max_duration_ps).
CREATE INDEX IF NOT EXISTS task_location_start ON task (location, start_ps);
-- Task view: the subtasks of a task.
CREATE INDEX IF NOT EXISTS task_parent ON task (parent);
-- Tags of one task, in time order.
CREATE INDEX IF NOT EXISTS task_tag_task ON task_tag (task, time_ps);
