"""The swarm: cascade rules, the per-agent runner, turns and the project engine."""
