// SwipeEngine: see the issue that builds it.
