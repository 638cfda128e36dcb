"""Finding the project's nodes and keeping them current.

The code graph (``codegraph.py``) holds every node and edge; ``code_index.py``
is the project's index over it — files, open documents, search. Discovery
(``remora_core.discovery``) parses a file into definitions; ``identity.py``
gives them stable ids; ``resolve.py`` turns names into ``calls``/``imports``
edges. ``indexer.py`` and ``disk.py`` index the workspace and follow the disk,
``documents.py`` and ``document_sync.py`` the editor's open buffers;
``index_writes.py`` stores what changed and ``changes.py`` says what to
announce. ``following.py`` follows a store another server owns.
"""
