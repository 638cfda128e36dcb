"""What was done and by whom: conversations, attribution, checkpoints.

``conversation.py`` reads a node's conversation from the event log;
``attribution.py`` says which lines an agent wrote (and the commit trailers);
``checkpoints.py`` snapshots and restores agents' state.
"""
