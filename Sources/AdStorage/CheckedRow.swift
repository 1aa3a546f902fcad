import GRDB

/// A column of a row read back from SQLite did not hold a value of the expected type (a corrupt or foreign file).
struct CorruptRow: Error, CustomStringConvertible {
    var column: String
    var description: String { "column \(column) holds NULL or a value of the wrong type" }
}

extension Row {
    /// The column's value as `T`, or ``CorruptRow`` naming the column. GRDB's plain subscript traps on NULL or a
    /// value that does not convert; a file on disk is outside input, so reads go through here.
    func checked<T: DatabaseValueConvertible>(_ column: String, as type: T.Type = T.self) throws -> T {
        let value: DatabaseValue? = self[column]
        guard let value, let converted = T.fromDatabaseValue(value) else { throw CorruptRow(column: column) }
        return converted
    }
}
