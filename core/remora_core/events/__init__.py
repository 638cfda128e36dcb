"""Events: typed models, the persisted log, subscriptions and the in-process bus."""
