import ArgumentParser
import Foundation
import HeraldApp
import HeraldCommandLine
import HeraldDomain
import HeraldKafka
import HeraldPush
import HeraldRegistry
import HeraldStreams

/// `herald hubs`: the deployment's hubs on the `herald.hubs` topic, for operators (the API's
/// `/v1/hubs` does the same for a namespace Manage policy).
struct HubsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hubs",
        abstract:
            "Create, list, change and delete hubs (apps), read or regenerate their policies' keys, and set their push credentials.",
        subcommands: [
            Create.self, List.self, Show.self, Delete.self, Purge.self, Keys.self, Regenerate.self, Credentials.self, Caps.self,
        ]
    )

    struct HubArgument: ParsableArguments {
        @Argument(help: "The hub's name (letters, digits, '.', '-', '_'; case-insensitive).") var hub: String

        func name() throws -> HubName {
            guard let name = HubName(hub) else { throw ValidationError("hub: \(HubName.problem(hub) ?? "not a hub name")") }
            guard !name.isDefault else {
                throw ValidationError("hub: the default hub is the deployment's own; its policies are HERALD_POLICIES")
            }
            return name
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Create a hub with Azure's two default policies (DefaultListenSharedAccessSignature, DefaultFullSharedAccessSignature)."
        )
        @OptionGroup var options: SettingsOptions
        @OptionGroup var hub: HubArgument
        @Option(help: "Notifications its API accepts per minute; the excess gets 403 quota_exceeded.") var sendsPerMinute: Int?

        func run() async throws {
            let name = try hub.name()
            if let perMinute = sendsPerMinute, !(1...100_000_000).contains(perMinute) {
                throw ValidationError("--sends-per-minute is 1 to 100000000")
            }
            let directory = try await HubsCommand.directory(options.settings(), writing: true)
            if try await directory.hub(name, strict: true) != nil { throw ValidationError("hub \(name) exists already") }
            let created = HubDefinition(
                name: name, policies: HubDefinition.defaultPolicies(), limits: HubLimits(sendsPerMinute: sendsPerMinute))
            try await directory.put(created)
            print("created hub \(name); its keys and connection strings: herald hubs keys \(name) <policy>")
            HubsCommand.describe(created)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every hub with its policies (never their keys).")
        @OptionGroup var options: SettingsOptions

        func run() async throws {
            let directory = try await HubsCommand.directory(options.settings(), writing: false)
            try await directory.refresh()
            let hubs = directory.hubs
            if hubs.isEmpty { print("no hubs besides the default") }
            for hub in hubs { HubsCommand.describe(hub) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One hub with its policies and limits (never its keys).")
        @OptionGroup var options: SettingsOptions
        @OptionGroup var hub: HubArgument

        func run() async throws {
            HubsCommand.describe(try await HubsCommand.existing(hub.name(), options.settings(), writing: false).1)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a hub: its routes answer 404 and its events are dead-lettered from then on.")
        @OptionGroup var options: SettingsOptions
        @OptionGroup var hub: HubArgument

        func run() async throws {
            let (directory, found) = try await HubsCommand.existing(hub.name(), options.settings(), writing: true)
            try await directory.delete(found.name)
            print("deleted hub \(found.name)")
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget a deleted hub's registrations and installations.",
            discussion:
                "Writes a deletion to herald.registrations for each registration and installation of the hub that the log still holds; the indexers remove them from Redis, and a hub created again under the name starts empty. The hub must be deleted first. Safe to run again."
        )
        @OptionGroup var options: SettingsOptions
        @OptionGroup var hub: HubArgument

        func run() async throws {
            let name = try hub.name()
            let settings = options.settings()
            let directory = try await HubsCommand.directory(settings, writing: false)
            if try await directory.hub(name, strict: true) != nil {
                throw ValidationError("hub \(name) exists: delete it first (herald hubs delete \(name)), then purge it")
            }
            let configuration = try settings.registryConfiguration()
            let producer = try KafkaProducer(configuration: settings.reliableProducerConfiguration(clientId: "herald-purge"))
            let purge = HubPurge(
                hub: name, configuration: configuration,
                consumerConfiguration: try settings.consumerConfiguration(groupId: nil, clientId: "herald-purge"),
                log: RegistrationLog(producer: producer, topic: configuration.registrationsTopic))
            let summary = try await purge.run()
            await producer.shutdown()
            print(
                "purged hub \(name): \(summary.registrations) registrations and \(summary.installations) installations deleted "
                    + "(\(summary.recordsRead) records of \(configuration.registrationsTopic) read); the indexers remove them from Redis")
        }
    }

    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A policy's keys and Azure connection strings.")
        @OptionGroup var options: SettingsOptions
        @OptionGroup var hub: HubArgument
        @Argument(help: "The policy's name.") var policy: String

        func run() async throws {
            let settings = options.settings()
            let (_, found) = try await HubsCommand.existing(hub.name(), settings, writing: false)
            guard let policy = found.policy(named: policy) else { throw ValidationError("hub \(found.name) has no policy \(policy)") }
            HubsCommand.printKeys(policy, hubResource: settings[.hubUri])
        }
    }

    struct Regenerate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a policy's primary or secondary key; tokens of the other key keep working.")
        @OptionGroup var options: SettingsOptions
        @OptionGroup var hub: HubArgument
        @Argument(help: "The policy's name.") var policy: String
        @Option(help: "primary or secondary.") var key: String

        func run() async throws {
            let settings = options.settings()
            guard ["primary", "secondary"].contains(key) else { throw ValidationError("--key is primary or secondary") }
            var (directory, found) = try await HubsCommand.existing(hub.name(), settings, writing: true)
            guard var changed = found.policy(named: policy) else { throw ValidationError("hub \(found.name) has no policy \(policy)") }
            if key == "primary" { changed.primaryKey = HubPolicy.newKey() } else { changed.secondaryKey = HubPolicy.newKey() }
            found.policies = found.policies.map { $0.name == changed.name ? changed : $0 }
            found.version += 1
            try await directory.put(found)
            HubsCommand.printKeys(changed, hubResource: settings[.hubUri])
        }
    }

    struct Credentials: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set or remove a hub's own push credentials, used for its deliveries instead of the deployment's.",
            discussion: """
                FILE is a JSON object with any of "apns", "fcm", "webPush" and "wns", each as the `credentials` member of \
                PUT /v1/hubs/{hub} takes it (docs/api.md); a service set to null is removed, one not named is kept. The keys \
                are checked as the sender will use them before anything is written.
                """)
        @OptionGroup var options: SettingsOptions
        @OptionGroup var hub: HubArgument
        @Option(help: "The credentials document (JSON).") var file: String

        func run() async throws {
            let name = try hub.name()
            guard let document = FileManager.default.contents(atPath: file) else { throw ValidationError("--file: cannot read \(file)") }
            let (directory, found) = try await HubsCommand.existing(name, options.settings(), writing: true)
            let request = Array(#"{"credentials":"#.utf8) + Array(document) + Array("}".utf8)
            let changed: HubDefinition
            do {
                changed = try HubDefinition.decodeRequest(request, name: name, current: found)
            } catch {
                throw ValidationError("\(file): " + error.issues.map(\.description).joined(separator: "; "))
            }
            if let problem = HubPushCredentials.problems(changed.credentials, hub: name).first {
                throw ValidationError("\(file): \(problem)")
            }
            try await directory.put(changed)
            HubsCommand.describe(changed)
        }
    }

    struct Caps: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set or remove a hub's frequency caps: how many alerts one device receives at most in a window.",
            discussion: """
                RULES is maxAlerts/windowSeconds, optionally :urgency+urgency (normal+bulk when not named: breaking news \
                goes through), several separated by commas, e.g. 3/86400,1/3600:bulk; `none` removes them. A device past a \
                cap is skipped as `capped` (docs/api.md, "Frequency caps").
                """)
        @OptionGroup var options: SettingsOptions
        @OptionGroup var hub: HubArgument
        @Argument(help: "The rules, or none.") var rules: String

        func run() async throws {
            let caps: [FrequencyCap]
            do {
                caps = rules == "none" ? [] : try FrequencyCap.parseList(rules)
            } catch {
                throw ValidationError("rules: " + error.issues.map(\.description).joined(separator: "; "))
            }
            let (directory, found) = try await HubsCommand.existing(hub.name(), options.settings(), writing: true)
            var changed = found
            changed.frequencyCaps = caps
            changed.version += 1
            try await directory.put(changed)
            HubsCommand.describe(changed)
        }
    }

    // MARK: Shared steps

    static func directory(_ settings: HeraldSettings, writing: Bool) async throws -> HubDirectory {
        let topics = try settings.topics
        let admin = try KafkaAdmin(configuration: settings.adminConfiguration())
        let specification = TopicProvisioner(topics: topics, bootstrapServers: settings[.kafkaBrokers]).specifications
            .filter { $0.name == topics.hubs }
        try await admin.createTopics(specification, ignoreExisting: true)
        let producer =
            writing ? try KafkaProducer(configuration: settings.reliableProducerConfiguration(clientId: "herald-hubs")) : nil
        return HubDirectory(
            topic: topics.hubs, bootstrapServers: settings[.kafkaBrokers], extra: try settings.kafkaProperties(), producer: producer)
    }

    static func existing(_ name: HubName, _ settings: HeraldSettings, writing: Bool) async throws -> (HubDirectory, HubDefinition) {
        let directory = try await directory(settings, writing: writing)
        guard let hub = try await directory.hub(name, strict: true) else { throw ValidationError("hub \(name) does not exist") }
        return (directory, hub)
    }

    static func describe(_ hub: HubDefinition) {
        let limit = hub.limits.summary.isEmpty ? "" : "  " + hub.limits.summary
        print("\(hub.name)  version=\(hub.version)\(limit)")
        for policy in hub.policies {
            print("  \(policy.name)  \(policy.rights.map(\.rawValue).sorted().joined(separator: "+"))")
        }
        let credentials = hub.credentials
        if let apns = credentials.apns {
            print("  apns: team \(apns.teamId), key \(apns.keyId), topics \(apns.topics.joined(separator: ",")), \(apns.endpoint)")
        }
        if let fcm = credentials.fcm { print("  fcm: project \(fcm.projectId), \(fcm.clientEmail)") }
        if let webPush = credentials.webPush { print("  webPush: \(webPush.subject)") }
        if let wns = credentials.wns { print("  wns: \(wns.packageSid)") }
        if !hub.frequencyCaps.isEmpty { print("  frequency caps: \(hub.frequencyCaps.map(\.settingText).joined(separator: ","))") }
    }

    static func printKeys(_ policy: HubPolicy, hubResource: String) {
        print("primary key:   \(policy.primaryKey)")
        print("secondary key: \(policy.secondaryKey)")
        print("primary:   \(HubDefinition.connectionString(hubResource: hubResource, policy: policy.name, key: policy.primaryKey))")
        print("secondary: \(HubDefinition.connectionString(hubResource: hubResource, policy: policy.name, key: policy.secondaryKey))")
    }
}
