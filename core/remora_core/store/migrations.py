"""Versioned schema migrations for the project database.

``MIGRATIONS[i]`` brings a database from version ``i`` to ``i + 1``; the version
lives in ``PRAGMA user_version``. Each migration runs in one transaction, so a
crash half-way leaves the previous version intact. Never edit a released
migration: append a new one.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: the structural core — files, nodes, edges (DESIGN §5).
    """
    CREATE TABLE files (
        path TEXT PRIMARY KEY,
        file_id TEXT NOT NULL,
        content_hash TEXT,
        status TEXT NOT NULL DEFAULT 'present',  -- present | deleted | skipped
        skipped_reason TEXT,
        indexed_at REAL
    );
    CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        qualified_name TEXT NOT NULL,
        file_path TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        start_col INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        end_col INTEGER NOT NULL,
        start_byte INTEGER NOT NULL,
        end_byte INTEGER NOT NULL,
        span_ascii INTEGER NOT NULL DEFAULT 1,
        name_line INTEGER NOT NULL,
        name_start_col INTEGER NOT NULL,
        name_end_col INTEGER NOT NULL,
        name_start_byte INTEGER NOT NULL,
        name_end_byte INTEGER NOT NULL,
        name_ascii INTEGER NOT NULL DEFAULT 1,
        source_hash TEXT NOT NULL,
        parent_id TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        agent_status TEXT NOT NULL DEFAULT 'idle',
        updated_at REAL NOT NULL
    );
    CREATE INDEX nodes_by_file ON nodes(file_path);
    CREATE TABLE edges (
        from_id TEXT NOT NULL,
        to_id TEXT NOT NULL,  -- may name a node of a file saved later
        kind TEXT NOT NULL,
        file_path TEXT NOT NULL,  -- the file whose parse produced the edge
        PRIMARY KEY (from_id, to_id, kind)
    ) WITHOUT ROWID;
    CREATE INDEX edges_by_target ON edges(to_id, kind);
    CREATE INDEX edges_by_file ON edges(file_path);
    """,
    # 2: events, subscriptions, cascade chains and runs (DESIGN §5-§7).
    """
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        timestamp REAL NOT NULL,
        correlation_id TEXT,
        run_id TEXT,
        agent_id TEXT,
        from_agent TEXT,
        to_agent TEXT,
        depth INTEGER NOT NULL DEFAULT 0,
        payload TEXT NOT NULL  -- the whole event as JSON
    );
    CREATE INDEX events_by_type ON events(type, seq);
    CREATE INDEX events_by_correlation ON events(correlation_id, seq);
    CREATE TABLE event_nodes (  -- every node an event concerns, for queries
        node_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (node_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE subscriptions (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        pattern TEXT NOT NULL,  -- JSON
        is_default INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    );
    CREATE INDEX subscriptions_by_agent ON subscriptions(agent_id);
    CREATE TABLE activation_chain (
        correlation_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        depth INTEGER NOT NULL,
        timestamp REAL NOT NULL,
        PRIMARY KEY (correlation_id, agent_id)
    );
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        node_id TEXT NOT NULL,
        trigger_event_id TEXT,
        correlation_id TEXT,
        status TEXT NOT NULL,  -- running | completed | failed | cancelled | interrupted
        started_at REAL NOT NULL,
        ended_at REAL,
        error TEXT
    );
    CREATE INDEX runs_by_status ON runs(status);
    """,
    # 3: what agents produce and remember — proposals, chat history, key-value
    # memory and copy-on-write file overlays (DESIGN §5, §8, §9).
    """
    CREATE TABLE proposals (
        id TEXT PRIMARY KEY,
        node_id TEXT NOT NULL,
        run_id TEXT,
        kind TEXT NOT NULL,  -- rewrite | new_node
        file_path TEXT NOT NULL,
        base_version INTEGER,  -- the open document's version, NULL if from disk
        base_hash TEXT NOT NULL,  -- sha256 of the node's text it was made against
        start_byte INTEGER NOT NULL,  -- where the edit goes in that text
        end_byte INTEGER NOT NULL,
        old_source TEXT NOT NULL,
        new_source TEXT NOT NULL,
        diff TEXT NOT NULL,
        reasoning TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL,  -- pending | accepted | rejected | stale | superseded
        feedback TEXT,
        created_at REAL NOT NULL,
        decided_at REAL
    );
    CREATE INDEX proposals_by_node ON proposals(node_id, status);
    CREATE INDEX proposals_by_status ON proposals(status, file_path);
    CREATE TABLE agent_state (
        agent_id TEXT PRIMARY KEY,
        chat_history TEXT NOT NULL DEFAULT '[]',  -- pydantic-ai messages, JSON
        custom_prompt TEXT,
        last_activated REAL
    );
    CREATE TABLE kv (
        agent_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,  -- JSON
        PRIMARY KEY (agent_id, key)
    ) WITHOUT ROWID;
    CREATE TABLE overlay (
        agent_id TEXT NOT NULL,
        path TEXT NOT NULL,
        content BLOB,  -- NULL with deleted = 1: a whiteout
        deleted INTEGER NOT NULL DEFAULT 0,
        base_hash TEXT,  -- sha256 of the file the overlay was made from
        PRIMARY KEY (agent_id, path)
    ) WITHOUT ROWID;
    """,
    # 4: a proposal being accepted remembers the whole text its edit produces,
    # written before the editor is asked to apply it: an acceptance that landed
    # just before a crash is recorded at the next start (DESIGN §9).
    """
    ALTER TABLE proposals ADD COLUMN accepting TEXT;  -- sha256, NULL if none
    """,
    # 5: tool arguments too large for an event are stored once, by their
    # sha256; the ``tool_called`` event carries a truncated copy and the hash
    # (limits.event_argument_chars).
    """
    CREATE TABLE tool_arguments (
        hash TEXT PRIMARY KEY,
        body TEXT NOT NULL  -- the arguments, JSON
    ) WITHOUT ROWID;
    """,
    # 6: checkpoints of agents' state, each part stored once by its sha256
    # (a checkpoint of unchanged state is one small row; DESIGN §10).
    """
    CREATE TABLE blobs (
        hash TEXT PRIMARY KEY,
        body BLOB NOT NULL  -- JSON rows of one part of a checkpoint
    ) WITHOUT ROWID;
    CREATE TABLE checkpoints (
        id TEXT PRIMARY KEY,
        label TEXT,
        created_at REAL NOT NULL,
        git_head TEXT,
        manifest TEXT NOT NULL  -- JSON: part name -> blob hash
    );
    """,
    # 7: what the list of runs and a node's conversation read: a run's events
    # by run id (its end), runs by the event that started them, newest first.
    """
    CREATE INDEX events_by_run ON events(run_id, type);
    CREATE INDEX runs_by_trigger ON runs(trigger_event_id);
    CREATE INDEX runs_by_start ON runs(started_at);
    """,
    # 8: what was checked about a proposal (intent guard, the project's
    # tests), JSON [{name, ok, detail, status}] (DESIGN §9).
    """
    ALTER TABLE proposals ADD COLUMN checks TEXT NOT NULL DEFAULT '[]';
    """,
    # 9: the file's stat (modification and change times, size, inode) when
    # its content hash was taken; while it is unchanged a warm start need not
    # read the file.
    """
    ALTER TABLE files ADD COLUMN mtime_ns INTEGER;
    ALTER TABLE files ADD COLUMN size INTEGER;
    ALTER TABLE files ADD COLUMN ctime_ns INTEGER;
    ALTER TABLE files ADD COLUMN inode INTEGER;
    """,
    # 10: what a run cost and why it woke (issue 28 §3-§4): its tokens as the
    # model reported them, summed (older runs' from their ``model_response``
    # events), why it ended when a budget stopped it, the subscription that
    # fired it, the graph run whose step it is (older runs' from their
    # trigger); runs by cascade, node and graph run for the totals; muted
    # agents.
    """
    ALTER TABLE runs ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN requests INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN end_reason TEXT;  -- limit_reached | NULL
    ALTER TABLE runs ADD COLUMN subscription_id TEXT;  -- the one that fired
    ALTER TABLE runs ADD COLUMN graph_run_id TEXT;  -- a graph step's run
    UPDATE runs SET
        input_tokens = COALESCE(u.i, 0), output_tokens = COALESCE(u.o, 0),
        requests = u.n
    FROM (
        SELECT run_id,
            SUM(json_extract(payload, '$.usage.input_tokens')) AS i,
            SUM(json_extract(payload, '$.usage.output_tokens')) AS o,
            COUNT(*) AS n
        FROM events WHERE type = 'model_response' AND run_id IS NOT NULL
        GROUP BY run_id
    ) AS u
    WHERE runs.id = u.run_id;
    UPDATE runs SET graph_run_id = (
        SELECT json_extract(e.payload, '$.graph_run_id') FROM events AS e
        WHERE e.id = runs.trigger_event_id AND e.type = 'human_chat'
    );
    CREATE INDEX runs_by_graph ON runs(graph_run_id);
    CREATE INDEX runs_by_correlation ON runs(correlation_id);
    CREATE INDEX runs_by_node ON runs(node_id, started_at);
    CREATE TABLE muted_agents (
        agent_id TEXT PRIMARY KEY,
        muted_at REAL NOT NULL
    ) WITHOUT ROWID;
    """,
    # 11: the name index of every active node as one blob, so that a warm
    # start answers its first symbol search without loading the whole graph
    # (``index/symbol_snapshot.py``); derived data, built again when missing.
    """
    CREATE TABLE symbol_snapshot (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        data BLOB NOT NULL
    );
    """,
    # 12: change sets and new files (DESIGN §15): a proposal's members, what
    # they depend on, the asking node's file and the members accepted, as
    # JSON; '{}' for every other proposal (its kind is what it was).
    """
    ALTER TABLE proposals ADD COLUMN parts TEXT NOT NULL DEFAULT '{}';
    """,
]

LATEST_VERSION = len(MIGRATIONS)
