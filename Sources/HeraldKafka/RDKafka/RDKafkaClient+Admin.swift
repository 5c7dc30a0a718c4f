import CRdKafka

extension RDKafkaClient {
    /// Runs one admin request and returns its result event. Admin results arrive on a private
    /// queue; this waits on it, so the caller must be off the cooperative pool.
    private func adminRequest(
        _ operation: String,
        type: rd_kafka_admin_op_t,
        timeoutMs: Int32,
        topic: String? = nil,
        send: (OpaquePointer, OpaquePointer) -> Void
    ) throws -> OpaquePointer {
        guard let options = rd_kafka_AdminOptions_new(handle, type), let queue = rd_kafka_queue_new(handle) else {
            throw KafkaError(code: .invalidArgument, message: "could not allocate admin request", operation: operation)
        }
        defer {
            rd_kafka_AdminOptions_destroy(options)
            rd_kafka_queue_destroy(queue)
        }
        var text = [CChar](repeating: 0, count: 512)
        _ = text.withUnsafeMutableBufferPointer {
            rd_kafka_AdminOptions_set_request_timeout(options, timeoutMs, $0.baseAddress, $0.count)
        }
        if type == RD_KAFKA_ADMIN_OP_CREATETOPICS || type == RD_KAFKA_ADMIN_OP_DELETETOPICS {
            _ = text.withUnsafeMutableBufferPointer {
                rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMs, $0.baseAddress, $0.count)
            }
        }
        send(options, queue)
        // The request timeout is enforced by librdkafka; the extra second only guards the wait.
        guard let event = rd_kafka_queue_poll(queue, timeoutMs + 1000) else {
            throw KafkaError(code: .timedOut, message: "no answer within \(timeoutMs) ms", operation: operation, topic: topic)
        }
        let code = rd_kafka_event_error(event)
        if code != RD_KAFKA_RESP_ERR_NO_ERROR {
            let detail = rd_kafka_event_error_string(event).map { String(cString: $0) }
            rd_kafka_event_destroy(event)
            throw KafkaError(code, operation: operation, topic: topic, detail: detail)
        }
        return event
    }

    func createTopics(_ specs: [KafkaTopicSpec], ignoreExisting: Bool, timeoutMs: Int32) throws {
        var text = [CChar](repeating: 0, count: 512)
        var newTopics: [OpaquePointer?] = []
        defer { for topic in newTopics { rd_kafka_NewTopic_destroy(topic) } }
        for spec in specs {
            let created = text.withUnsafeMutableBufferPointer {
                rd_kafka_NewTopic_new(spec.name, Int32(spec.partitions), Int32(spec.replicationFactor), $0.baseAddress, $0.count)
            }
            guard let created else {
                throw KafkaError(code: .invalidArgument, message: text.nulTerminatedText, operation: "create topic", topic: spec.name)
            }
            newTopics.append(created)
            for (key, value) in spec.configs.sorted(by: { $0.key < $1.key }) {
                try KafkaError.check(
                    rd_kafka_NewTopic_set_config(created, key, value),
                    operation: "create topic (config \(key)=\(value))",
                    topic: spec.name
                )
            }
        }
        let event = try adminRequest("create topics", type: RD_KAFKA_ADMIN_OP_CREATETOPICS, timeoutMs: timeoutMs) { options, queue in
            newTopics.withUnsafeMutableBufferPointer {
                rd_kafka_CreateTopics(handle, $0.baseAddress, $0.count, options, queue)
            }
        }
        defer { rd_kafka_event_destroy(event) }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count) else { return }
        for index in 0..<count {
            guard let result = results[index] else { continue }
            let code = rd_kafka_topic_result_error(result)
            if code == RD_KAFKA_RESP_ERR_NO_ERROR || (ignoreExisting && code == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) { continue }
            throw KafkaError(
                code,
                operation: "create topic",
                topic: String(cString: rd_kafka_topic_result_name(result)),
                detail: rd_kafka_topic_result_error_string(result).map { String(cString: $0) }
            )
        }
    }

    func deleteTopics(_ names: [String], ignoreMissing: Bool, timeoutMs: Int32) throws {
        var deletions: [OpaquePointer?] = names.map { rd_kafka_DeleteTopic_new($0) }
        defer { for deletion in deletions { rd_kafka_DeleteTopic_destroy(deletion) } }
        let event = try adminRequest("delete topics", type: RD_KAFKA_ADMIN_OP_DELETETOPICS, timeoutMs: timeoutMs) { options, queue in
            deletions.withUnsafeMutableBufferPointer {
                rd_kafka_DeleteTopics(handle, $0.baseAddress, $0.count, options, queue)
            }
        }
        defer { rd_kafka_event_destroy(event) }
        var count = 0
        guard let results = rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event), &count) else { return }
        for index in 0..<count {
            guard let result = results[index] else { continue }
            let code = rd_kafka_topic_result_error(result)
            if code == RD_KAFKA_RESP_ERR_NO_ERROR || (ignoreMissing && code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) { continue }
            throw KafkaError(code, operation: "delete topic", topic: String(cString: rd_kafka_topic_result_name(result)))
        }
    }

    /// Topic-level configs of `topic` (every entry the broker reports, defaults included).
    func describeTopicConfigs(_ topic: String, timeoutMs: Int32) throws -> [String: String] {
        let operation = "describe topic configs"
        var resources: [OpaquePointer?] = [rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic)]
        defer { rd_kafka_ConfigResource_destroy_array(&resources, resources.count) }
        let event = try adminRequest(operation, type: RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, timeoutMs: timeoutMs, topic: topic) {
            options, queue in
            resources.withUnsafeMutableBufferPointer {
                rd_kafka_DescribeConfigs(handle, $0.baseAddress, $0.count, options, queue)
            }
        }
        defer { rd_kafka_event_destroy(event) }
        var resourceCount = 0
        guard let described = rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(event), &resourceCount) else {
            return [:]
        }
        var configs: [String: String] = [:]
        for index in 0..<resourceCount {
            guard let resource = described[index] else { continue }
            let code = rd_kafka_ConfigResource_error(resource)
            if code != RD_KAFKA_RESP_ERR_NO_ERROR {
                throw KafkaError(
                    code,
                    operation: operation,
                    topic: topic,
                    detail: rd_kafka_ConfigResource_error_string(resource).map { String(cString: $0) }
                )
            }
            var entryCount = 0
            guard let entries = rd_kafka_ConfigResource_configs(resource, &entryCount) else { continue }
            for entryIndex in 0..<entryCount {
                guard let entry = entries[entryIndex], let name = rd_kafka_ConfigEntry_name(entry) else { continue }
                configs[String(cString: name)] = rd_kafka_ConfigEntry_value(entry).map { String(cString: $0) } ?? ""
            }
        }
        return configs
    }

    /// Every topic in the cluster metadata.
    func describeAllTopics(timeoutMs: Int32) throws -> [KafkaTopicDescription] {
        var metadata: UnsafePointer<rd_kafka_metadata_t>?
        try KafkaError.check(rd_kafka_metadata(handle, 1, nil, &metadata, timeoutMs), operation: "read cluster metadata")
        guard let metadata else { return [] }
        defer { rd_kafka_metadata_destroy(metadata) }
        return (0..<Int(metadata.pointee.topic_cnt)).compactMap { index in
            let topic = metadata.pointee.topics[index]
            guard topic.err == RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
            let partitions = (0..<Int(topic.partition_cnt)).map { partitionIndex in
                let partition = topic.partitions[partitionIndex]
                return KafkaTopicDescription.Partition(
                    id: partition.id,
                    leader: partition.leader,
                    replicas: (0..<Int(partition.replica_cnt)).map { partition.replicas[$0] },
                    inSyncReplicas: (0..<Int(partition.isr_cnt)).map { partition.isrs[$0] }
                )
            }
            return KafkaTopicDescription(name: String(cString: topic.topic), partitions: partitions.sorted { $0.id < $1.id })
        }
    }
}
