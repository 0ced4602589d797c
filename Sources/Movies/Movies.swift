// Movies: see the issue that builds it.
