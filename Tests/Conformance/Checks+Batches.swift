import Foundation

/// Batches: in order, each as if sent alone, stopping after the first that does not succeed.
extension ConformanceSuite {
    static let batchChecks: [Check] = [
        Check("batch-order", "requests apply in order, each as if alone, and the batch stops after the first failure") { context in
            guard context.options.hasBatches else { throw CheckSkip(reason: "--no-batch") }
            let collection = context.collection
            let (a, b, c) = (context.newID(), context.newID(), context.newID())
            let answer = try sendBatch(
                context,
                [
                    item(context, "PUT", collection, a, precondition: "If-None-Match", "*", note: "a"),
                    item(context, "PUT", collection, b, precondition: "If-None-Match", "*", note: "b"),
                    item(context, "PUT", collection, a, precondition: "If-None-Match", "*", note: "a again"),
                    item(context, "PUT", collection, c, precondition: "If-None-Match", "*", note: "c"),
                ])
            let statuses = answer.map(\.status)
            guard statuses == [201, 201, 412] else {
                throw CheckFailure("the batch answered statuses \(statuses), not [201, 201, 412] (the fourth not processed)")
            }
            guard let version = answer[0].etag else { throw CheckFailure("the batch's first response has no ETag header") }
            guard answer[2].body == context.entity(collection, id: a, note: "a"), answer[2].etag == version else {
                throw CheckFailure("the 412 inside the batch is not the current entity with its ETag: \(answer[2])")
            }
            try context.expectStored(collection, a, (context.entity(collection, id: a, note: "a"), version), "after the batch")
            try context.expectStored(collection, c, nil, "after the batch (the request after the failure)")
        },
        Check("batch-delete-gone", "a DELETE answered 404 or 410 counts as success and the batch goes on") { context in
            guard context.options.hasBatches else { throw CheckSkip(reason: "--no-batch") }
            let collection = context.collection
            let (missing, d) = (context.newID(), context.newID())
            let answer = try sendBatch(
                context,
                [
                    item(context, "DELETE", collection, missing, precondition: nil, "", note: ""),
                    item(context, "PUT", collection, d, precondition: "If-None-Match", "*", note: "d"),
                ])
            guard answer.count == 2, [404, 410].contains(answer[0].status), answer[1].status == 201 else {
                throw CheckFailure("the batch answered \(answer.map(\.status)), not [404 or 410, 201]")
            }
            try context.expectStored(collection, d, (context.entity(collection, id: d, note: "d"), answer[1].etag ?? ""), "after the batch")
        },
    ]

    /// One request of a batch, as JSON.
    static func item(
        _ context: CheckContext, _ method: String, _ collection: ConformanceOptions.Collection, _ id: String,
        precondition: String?, _ value: String, note: String
    ) -> JSON {
        var headers: [String: JSON] = ["Idempotency-Key": .string(context.newKey()), "Folio-Partition": .string(collection.partition)]
        if let precondition { headers[precondition] = .string(value) }
        var item: [String: JSON] = ["method": .string(method), "path": .string(context.path(collection.name, id)), "headers": .object(headers)]
        if method == "PUT" { item["body"] = context.entity(collection, id: id, note: note) }
        return .object(item)
    }

    /// One response inside a batch answer.
    struct BatchResponse: CustomStringConvertible {
        var status: Int
        var etag: String?
        var body: JSON?
        var description: String { "\(status) ETag \(etag ?? "none") \(body?.description ?? "")" }
    }

    /// Sends `POST {base}/_batch` and reads its responses; fails unless it is a 200 with a list.
    static func sendBatch(_ context: CheckContext, _ items: [JSON]) throws -> [BatchResponse] {
        let answer = try context.send("POST", "_batch", body: JSON.object(["requests": .array(items)]).data)
        try context.expect(answer, [200], "POST _batch")
        guard let list = answer.json?["responses"]?.arrayValue else { throw CheckFailure("the batch answer has no \"responses\" array: \(answer.summary)") }
        return try list.map { response in
            guard case .number(let status)? = response["status"] else { throw CheckFailure("a batch response has no status: \(response)") }
            var etag: String?
            if case .object(let headers)? = response["headers"] {
                etag = headers.first { $0.key.lowercased() == "etag" }?.value.stringValue.flatMap(CheckContext.version)
            }
            return BatchResponse(status: Int(status), etag: etag, body: response["body"])
        }
    }
}
