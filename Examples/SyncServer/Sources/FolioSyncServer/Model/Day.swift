import Foundation

/// Calendar days in UTC, as partition keys.
enum Day {
    /// The UTC day of an instant: `2026-11-22`.
    static func utc(_ date: Date) -> String {
        String(date.formatted(Date.ISO8601FormatStyle()).prefix(10))
    }
}
