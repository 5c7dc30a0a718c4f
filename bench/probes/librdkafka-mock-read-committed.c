/* Does librdkafka's mock cluster (test.mock.num.brokers) hide aborted transactions from a
 * read_committed consumer, as Apache Kafka does (and Tansu does not)?
 *
 * A transactional producer on a one-broker mock cluster writes 20 records and aborts, then
 * writes one marker and commits. A read_committed and a read_uncommitted consumer read the
 * partition from the start until they see the marker, and print how many records they saw.
 * Build and run: bench/probes/librdkafka-mock-read-committed.sh
 */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, rd_kafka_error_t *error) {
    fprintf(stderr, "%s: %s\n", what, error ? rd_kafka_error_string(error) : "failed");
    exit(1);
}

static int read_all(const char *bootstraps, const char *isolation) {
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps, errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "group.id", isolation, errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "isolation.level", isolation, errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof errstr);
    rd_kafka_t *consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
    if (!consumer) { fprintf(stderr, "consumer: %s\n", errstr); exit(1); }
    rd_kafka_topic_partition_list_t *partitions = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(partitions, "probe", 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(consumer, partitions);
    rd_kafka_topic_partition_list_destroy(partitions);
    int seen = 0, marker = 0;
    for (int polls = 0; polls < 100 && !marker; polls++) {
        rd_kafka_message_t *message = rd_kafka_consumer_poll(consumer, 100);
        if (!message) continue;
        if (!message->err) {
            seen++;
            if (message->len == 6 && memcmp(message->payload, "marker", 6) == 0) marker = 1;
        }
        rd_kafka_message_destroy(message);
    }
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
    printf("%s: %d records before and with the marker%s\n", isolation, seen, marker ? "" : " (marker not seen)");
    return seen;
}

int main(void) {
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "test.mock.num.brokers", "1", errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "transactional.id", "probe", errstr, sizeof errstr);
    rd_kafka_t *producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!producer) { fprintf(stderr, "producer: %s\n", errstr); return 1; }
    const char *bootstraps = rd_kafka_mock_cluster_bootstraps(rd_kafka_handle_mock_cluster(producer));
    printf("librdkafka %s, mock cluster at %s\n", rd_kafka_version_str(), bootstraps);
    rd_kafka_error_t *error;
    if ((error = rd_kafka_init_transactions(producer, 10000))) die("init", error);
    if ((error = rd_kafka_begin_transaction(producer))) die("begin", error);
    for (int i = 0; i < 20; i++)
        rd_kafka_producev(producer, RD_KAFKA_V_TOPIC("probe"), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_VALUE("aborted", 7), RD_KAFKA_V_END);
    rd_kafka_flush(producer, 10000);
    if ((error = rd_kafka_abort_transaction(producer, 10000))) die("abort", error);
    if ((error = rd_kafka_begin_transaction(producer))) die("begin", error);
    rd_kafka_producev(producer, RD_KAFKA_V_TOPIC("probe"), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_VALUE("marker", 6), RD_KAFKA_V_END);
    if ((error = rd_kafka_commit_transaction(producer, 10000))) die("commit", error);
    int committed = read_all(bootstraps, "read_committed");
    int uncommitted = read_all(bootstraps, "read_uncommitted");
    printf(committed == 1 ? "the mock cluster filters aborted transactions (read_committed saw only the marker)\n"
                          : "the mock cluster does NOT filter aborted transactions\n");
    rd_kafka_destroy(producer);
    return committed == 1 && uncommitted == 21 ? 0 : 2;
}
