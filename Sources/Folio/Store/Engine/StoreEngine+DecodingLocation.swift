/// Giving a decoding failure the line and column of its entity's field in the file.
extension StoreEngine {
    /// `error` with the line and column of the field at fault (or of the entity) when it is a
    /// ``FolioError/Code/decodingFailed`` about an entity of a partition file; else `error`.
    func locatingDecodingFailure(_ error: FolioError) -> FolioError {
        guard error.code == .decodingFailed, error.line == nil, let id = error.entityID, let path = error.path,
            path.hasSuffix(".json"), !path.hasPrefix("/")
        else { return error }
        let file: (bytes: [UInt8], identity: FileIdentity)?
        // A file that cannot be read again leaves the failure where it is: without a line.
        do { file = try fileSystem.read(path) } catch _ { return error }
        guard let bytes = file?.bytes else { return error }
        let locator = JSONKeyLocator(bytes)
        let field = error.fieldPath?.first.map { ["entities", id, $0] }
        guard let position = field.flatMap({ locator.position(of: $0) }) ?? locator.position(of: ["entities", id]) else { return error }
        var located = FolioError(
            error.code, error.message, path: path, line: position.line, column: position.column,
            entityID: error.entityID, systemError: error.systemError)
        located.fieldPath = error.fieldPath
        return located
    }
}
