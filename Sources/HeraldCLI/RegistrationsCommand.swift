import ArgumentParser
import HeraldCommandLine
import Foundation
import HeraldApp

struct RegistrationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registrations",
        abstract: "Create, read, delete and list registrations through the HTTP API.",
        subcommands: [Put.self, Get.self, Delete.self, List.self]
    )

    struct APIOptions: ParsableArguments {
        @Option(help: "API base URL (default http://127.0.0.1:$HERALD_API_PORT).") var url: String?
        @Option(help: "Authorization header value: a SharedAccessSignature token or 'Bearer <user token>' (HERALD_TOKEN).")
        var token: String?

        func client() throws -> HeraldHTTPClient {
            let settings = HeraldSettings()
            let base = url ?? "http://127.0.0.1:\(settings[.apiPort])"
            guard let baseURL = URL(string: base) else { throw ValidationError("invalid --url \(base)") }
            let authorization = token ?? ProcessInfo.processInfo.environment["HERALD_TOKEN"]
            return HeraldHTTPClient(baseURL: baseURL, authorization: authorization)
        }

        /// Prints the body; a non-2xx reply becomes a failure with the API's error body.
        func show(_ reply: HeraldHTTPClient.Reply, what: String) throws {
            guard (200..<300).contains(reply.status) else {
                throw CommandFailure("\(what): HTTP \(reply.status) \(reply.text)")
            }
            if let etag = reply.header("ETag") {
                var stderr = StandardError()
                print("ETag: \(etag)", to: &stderr)
            }
            if !reply.body.isEmpty { print(reply.text) }
        }
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or update a registration (without an id, one is issued first)."
        )
        @OptionGroup var api: APIOptions
        @Argument(help: "Registration id (omit to get a new one from POST /v1/registrationIDs).") var id: String?
        @Option(help: "The registration JSON (platform, handle, tags, template), or @file.") var body: String
        @Option(help: "Only if the stored version (ETag) matches.") var ifMatch: String?

        func run() async throws {
            let client = try api.client()
            var registrationId = id
            if registrationId == nil {
                let created = try await client.send("POST", "/v1/registrationIDs")
                guard created.status == 201, let location = created.header("Location") else {
                    throw CommandFailure("POST /v1/registrationIDs: HTTP \(created.status) \(created.text)")
                }
                registrationId = location.split(separator: "/").last.map(String.init)
            }
            let payload = Data(try InputArgument.resolve(body).utf8)
            let headers = ifMatch.map { ["If-Match": $0] } ?? [:]
            let reply = try await client.send("PUT", "/v1/registrations/\(registrationId!)", body: payload, headers: headers)
            try api.show(reply, what: "PUT /v1/registrations/\(registrationId!)")
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a registration.")
        @OptionGroup var api: APIOptions
        @Argument var id: String

        func run() async throws {
            let reply = try await api.client().send("GET", "/v1/registrations/\(id)")
            try api.show(reply, what: "GET /v1/registrations/\(id)")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a registration.")
        @OptionGroup var api: APIOptions
        @Argument var id: String
        @Option(help: "Only if the stored version (ETag) matches.") var ifMatch: String?

        func run() async throws {
            let headers = ifMatch.map { ["If-Match": $0] } ?? [:]
            let reply = try await api.client().send("DELETE", "/v1/registrations/\(id)", headers: headers)
            try api.show(reply, what: "DELETE /v1/registrations/\(id)")
            print("deleted \(id)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registrations by tag or handle (paged).")
        @OptionGroup var api: APIOptions
        @Option var tag: String?
        @Option var handle: String?
        @Option var limit = 100
        @Option var cursor: String?

        func run() async throws {
            var query = URLComponents()
            query.path = "/v1/registrations"
            query.queryItems =
                [URLQueryItem(name: "limit", value: String(limit))]
                + [("tag", tag), ("handle", handle), ("cursor", cursor)].compactMap { name, value in
                    value.map { URLQueryItem(name: name, value: $0) }
                }
            let reply = try await api.client().send("GET", query.string ?? "/v1/registrations")
            try api.show(reply, what: "GET /v1/registrations")
        }
    }
}
