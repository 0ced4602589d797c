// What users of the store need without importing the modules below it (the daemon imports the
// stores, not the log): LogTypes' durability setting that `open` takes, and Plumbing's clocks.
@_exported import enum LogTypes.Durability
@_exported import enum Plumbing.SystemClock
