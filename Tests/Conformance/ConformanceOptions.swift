public import Foundation

/// What the server under test serves, and how to reach it: the suite's input.
///
/// Every check runs against the collections named here; a server that validates its model needs
/// a sample entity per collection that it accepts (`"$ID"` stands for the id the suite picks).
public struct ConformanceOptions: Sendable {
    /// A collection clients push to.
    public struct Collection: Sendable {
        /// The collection's name, as in the URL.
        public var name: String
        /// The partition key every sample entity belongs to (`""` for an unpartitioned collection);
        /// sent as `Folio-Partition` and pulled with `?partition=`.
        public var partition: String
        /// A JSON object the server accepts, with `"$ID"` where the entity's id goes.
        public var sample: String
        /// Whether the collection accepts any valid id (FORMAT.md), not only uppercase UUIDs:
        /// the percent-encoding checks run on such a collection.
        public var acceptsAnyID: Bool

        /// Creates a collection description.
        /// - Parameters:
        ///   - name: The collection's name.
        ///   - partition: The partition key of the sample entity (`""`: unpartitioned).
        ///   - sample: A JSON object with `"$ID"` for the id.
        ///   - acceptsAnyID: Whether ids other than uppercase UUIDs are accepted.
        public init(name: String, partition: String, sample: String, acceptsAnyID: Bool = false) {
            self.name = name
            self.partition = partition
            self.sample = sample
            self.acceptsAnyID = acceptsAnyID
        }
    }

    /// A server-computed (pull-only) collection and one partition key to pull.
    public struct ServerComputed: Sendable {
        public var name: String
        public var partition: String

        /// Creates a server-computed collection description.
        public init(name: String, partition: String) {
            self.name = name
            self.partition = partition
        }
    }

    /// The protocol's base URL, `http://127.0.0.1:8080/api/`.
    public var baseURL: URL
    /// The collections clients push to (at least one).
    public var collections: [Collection]
    /// The server-computed collections.
    public var serverComputed: [ServerComputed] = []
    /// A collection name the server does not serve.
    public var unservedCollection = "folioConformanceUnserved"
    /// The bearer token, when the server requires one (the auth checks run only then).
    public var token: String?
    /// Whether the server has a change feed (`?since=`); when false, it must answer 501.
    public var hasChangeFeed = true
    /// Whether the server accepts `POST {base}/_batch`.
    public var hasBatches = true
    /// The member the suite sets to tell versions of an entity apart (the server must keep it).
    public var editMember = "conformance"
    /// Seeds the ids and keys the suite picks, so a run can be repeated.
    public var seed: UInt64 = 1
    /// Seconds any one exchange may take.
    public var timeout: Double = 10

    /// Creates options for one collection at least.
    /// - Parameters:
    ///   - baseURL: The protocol's base URL.
    ///   - collections: The collections clients push to.
    public init(baseURL: URL, collections: [Collection]) {
        self.baseURL = baseURL
        self.collections = collections
    }

    /// The usage text of `folio-conformance`.
    public static let usage = """
        usage: folio-conformance <base-url> --collection NAME@PARTITION=JSON [options]
               folio-conformance --list        (the names of the checks, as PROTOCOL.md lists them)

          --collection NAME@PARTITION=JSON   a collection clients push to; JSON is an entity the server
                                             accepts, with "$ID" for the id (repeatable, at least one)
          --any-ids NAME                     NAME accepts any valid id, not only uppercase UUIDs
          --server-computed NAME@PARTITION   a pull-only collection and a partition to pull (repeatable)
          --unserved NAME                    a collection the server does not serve (default folioConformanceUnserved)
          --token SECRET                     the server requires "Authorization: Bearer SECRET"
          --no-feed                          the server has no change feed (it must answer ?since= with 501)
          --no-batch                         the server does not accept POST {base}/_batch
          --edit-member NAME                 the member set to tell versions apart (default conformance)
          --seed N                           seeds the ids and keys (default: the time)
          --timeout SECONDS                  per exchange (default 10)
        """

    /// Reads the command line of `folio-conformance` (without the program name).
    /// - Parameter arguments: The arguments.
    /// - Returns: The options.
    /// - Throws: ``ConformanceUsageError`` naming the argument that is wrong.
    public static func parse(_ arguments: [String]) throws -> ConformanceOptions {
        var base: URL?
        var collections: [Collection] = []
        var anyIDs: Set<String> = []
        var computed: [ServerComputed] = []
        var options = ConformanceOptions(baseURL: URL(fileURLWithPath: "/"), collections: [])
        options.seed = UInt64(Date().timeIntervalSince1970 * 1000) % 1_000_000
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws -> String {
            guard let next = iterator.next() else { throw ConformanceUsageError(description: "\(flag) needs a value") }
            return next
        }
        func namePartition(_ text: Substring, _ flag: String) throws -> (String, String) {
            guard let at = text.firstIndex(of: "@") else { throw ConformanceUsageError(description: "\(flag) is NAME@PARTITION, not \(text)") }
            return (String(text[..<at]), String(text[text.index(after: at)...]))
        }
        while let argument = iterator.next() {
            switch argument {
            case "--collection":
                let text = try value(argument)
                guard let equals = text.firstIndex(of: "=") else {
                    throw ConformanceUsageError(description: "--collection is NAME@PARTITION=JSON, not \(text)")
                }
                let (name, partition) = try namePartition(text[..<equals], argument)
                let sample = String(text[text.index(after: equals)...])
                guard (try? JSON.parse(sample.replacingOccurrences(of: "$ID", with: "x")))?.isObject == true else {
                    throw ConformanceUsageError(description: "--collection \(name): the sample is not a JSON object: \(sample)")
                }
                collections.append(Collection(name: name, partition: partition, sample: sample))
            case "--any-ids": anyIDs.insert(try value(argument))
            case "--server-computed":
                let (name, partition) = try namePartition(Substring(try value(argument)), argument)
                computed.append(ServerComputed(name: name, partition: partition))
            case "--unserved": options.unservedCollection = try value(argument)
            case "--token": options.token = try value(argument)
            case "--no-feed": options.hasChangeFeed = false
            case "--no-batch": options.hasBatches = false
            case "--edit-member": options.editMember = try value(argument)
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else { throw ConformanceUsageError(description: "--seed takes a number, not \(text)") }
                options.seed = seed
            case "--timeout":
                let text = try value(argument)
                guard let seconds = Double(text), seconds > 0 else { throw ConformanceUsageError(description: "--timeout takes seconds, not \(text)") }
                options.timeout = seconds
            default:
                guard !argument.hasPrefix("-"), base == nil else { throw ConformanceUsageError(description: "unknown argument \(argument)") }
                guard let url = URL(string: argument), url.scheme == "http", url.host != nil else {
                    throw ConformanceUsageError(description: "the base URL must be http://HOST:PORT/PATH/, not \(argument)")
                }
                base = url
            }
        }
        guard let base else { throw ConformanceUsageError(description: "no base URL") }
        guard !collections.isEmpty else { throw ConformanceUsageError(description: "no --collection") }
        for name in anyIDs where !collections.contains(where: { $0.name == name }) {
            throw ConformanceUsageError(description: "--any-ids \(name): no such --collection")
        }
        options.baseURL = base
        options.collections = collections.map { collection in
            var collection = collection
            collection.acceptsAnyID = anyIDs.contains(collection.name)
            return collection
        }
        options.serverComputed = computed
        return options
    }
}

/// A command line `folio-conformance` cannot run with.
public struct ConformanceUsageError: Error, CustomStringConvertible {
    public var description: String
}
