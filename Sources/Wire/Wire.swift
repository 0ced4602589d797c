// Wire: see the issue that builds it.
