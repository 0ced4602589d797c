// SwipedClient: see the issue that builds it.
