import ArgumentParser
import Foundation
import HeraldAPI
import HeraldApp

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Make access tokens for the HTTP API (for operators, backends and tests).",
        subcommands: [SAS.self, User.self]
    )

    struct SAS: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sas",
            abstract: "A SharedAccessSignature token for a named policy (the whole Authorization header value)."
        )
        @Option(help: "Policy name (skn).") var policy: String
        @Option(help: "The policy's key.") var key: String
        @Option(help: "Resource URI the token is for (HERALD_HUB_URI).") var resource: String?
        @Option(help: "Lifetime in seconds.") var ttl: Int = 3600

        func run() throws {
            let hub = resource ?? HeraldSettings()[.hubUri]
            print(SharedAccessSignature.token(resource: hub, policy: policy, key: key, expiry: Date().addingTimeInterval(Double(ttl))))
        }
    }

    struct User: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "user",
            abstract: "A user token (HS256 JWT, subject = user id) for notify-users; send as 'Authorization: Bearer <token>'."
        )
        @Argument(help: "The user id; registrations made with the token carry $UserId:{user}.") var user: String
        @Option(help: "The user-token key (HERALD_USER_TOKEN_KEY).") var key: String?
        @Option(help: "Lifetime in seconds.") var ttl: Int = 3600

        func run() async throws {
            guard let key = key ?? Optional(HeraldSettings()[.userTokenKey]), !key.isEmpty else {
                throw ValidationError("give --key or set HERALD_USER_TOKEN_KEY")
            }
            print(try await UserToken.make(user: user, key: key, expiry: Date().addingTimeInterval(Double(ttl))))
        }
    }
}
