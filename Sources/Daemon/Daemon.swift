// Daemon: see the issue that builds it.
