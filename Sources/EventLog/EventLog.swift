// EventLog: see the issue that builds it.
