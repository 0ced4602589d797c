// How much of a row a connection receives (`options`'s `rows`). A GUI wants every part of a row;
// a person at socat wants the few that say where the row is, so `compact` leaves out what only
// an animating, accessible front end reads. Every row a connection receives is worded in its
// form (Encode.row, RowTemplate).

/// The form of the rows sent to one connection.
public enum RowForm: String, Sendable, CaseIterable {
    /// Every field of the Row object (the default at connect).
    case full
    /// `movie`, `offset`, `phase`, `edge`, `fullSwipe` and `buttons`: no `spring`, no
    /// `accessibilityActions`.
    case compact
}
