/* Standalone reproduction of a librdkafka 2.16 crash, no Herald code (run it with
 * bench/probes/librdkafka-topic-deleted-under-consumer.sh): assign-only read_committed consumers,
 * closed but not destroyed, while their topic is deleted (what herald bench's clean-up did).
 * argv[1]=bootstrap, argv[2]=topic, argv[3]="alive" (delete while the consumers exist) or
 * "destroyed" (destroy them first). */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rd_kafka_t *mk(rd_kafka_type_t type, const char *bs, const char *kv[][2]) {
        char err[512];
        rd_kafka_conf_t *c = rd_kafka_conf_new();
        rd_kafka_conf_set(c, "bootstrap.servers", bs, err, sizeof err);
        for (int i = 0; kv && kv[i][0]; i++)
                if (rd_kafka_conf_set(c, kv[i][0], kv[i][1], err, sizeof err) != RD_KAFKA_CONF_OK) {
                        fprintf(stderr, "%s\n", err); exit(2);
                }
        rd_kafka_t *rk = rd_kafka_new(type, c, err, sizeof err);
        if (!rk) { fprintf(stderr, "%s\n", err); exit(2); }
        return rk;
}

static void admin_op(rd_kafka_t *admin, const char *topic, int create) {
        char err[512];
        rd_kafka_queue_t *q = rd_kafka_queue_new(admin);
        rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(admin, RD_KAFKA_ADMIN_OP_ANY);
        if (create) {
                rd_kafka_NewTopic_t *t = rd_kafka_NewTopic_new(topic, 8, 1, err, sizeof err);
                rd_kafka_CreateTopics(admin, &t, 1, o, q);
                rd_kafka_NewTopic_destroy(t);
        } else {
                rd_kafka_DeleteTopic_t *t = rd_kafka_DeleteTopic_new(topic);
                rd_kafka_DeleteTopics(admin, &t, 1, o, q);
                rd_kafka_DeleteTopic_destroy(t);
        }
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
        if (ev) rd_kafka_event_destroy(ev);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
}

int main(int argc, char **argv) {
        const char *bs = argv[1], *topic = argv[2];
        int alive = strcmp(argv[3], "alive") == 0;
        rd_kafka_t *admin = mk(RD_KAFKA_PRODUCER, bs, NULL);
        admin_op(admin, topic, 1);
        const char *pkv[][2] = {{"linger.ms", "5"}, {NULL, NULL}};
        rd_kafka_t *p = mk(RD_KAFKA_PRODUCER, bs, pkv);
        for (int i = 0; i < 20000; i++) {
                char v[200]; snprintf(v, sizeof v, "{\"deliveryId\":\"ev/%d\",\"x\":\"%0150d\"}", i, i);
                while (rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(i % 8),
                                         RD_KAFKA_V_VALUE(v, strlen(v)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                         RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        rd_kafka_poll(p, 10);
        }
        rd_kafka_flush(p, 10000);
        const char *c1[][2] = {{"group.id", "herald-assign-only"}, {"isolation.level", "read_committed"},
                               {"fetch.wait.max.ms", "5"}, {"enable.auto.commit", "false"}, {NULL, NULL}};
        const char *c2[][2] = {{"group.id", "herald-assign-only"}, {"isolation.level", "read_committed"},
                               {"fetch.wait.max.ms", "25"}, {"fetch.min.bytes", "1048576"},
                               {"enable.auto.commit", "false"}, {NULL, NULL}};
        rd_kafka_t *cs[2] = {mk(RD_KAFKA_CONSUMER, bs, c1), mk(RD_KAFKA_CONSUMER, bs, c2)};
        for (int k = 0; k < 2; k++) {
                rd_kafka_poll_set_consumer(cs[k]);
                rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
                for (int i = (k == 0 ? 0 : 1); i < (k == 0 ? 1 : 8); i++)
                        rd_kafka_topic_partition_list_add(l, topic, i)->offset = RD_KAFKA_OFFSET_BEGINNING;
                rd_kafka_assign(cs[k], l);
                rd_kafka_topic_partition_list_destroy(l);
        }
        int seen = 0;
        for (int round = 0; round < 60; round++)
                for (int k = 0; k < 2; k++) {
                        rd_kafka_message_t *m = rd_kafka_consumer_poll(cs[k], 10);
                        if (m) { if (!m->err) seen++; rd_kafka_message_destroy(m); }
                }
        for (int k = 0; k < 2; k++) rd_kafka_consumer_close(cs[k]);
        if (!alive) for (int k = 0; k < 2; k++) rd_kafka_destroy(cs[k]);
        admin_op(admin, topic, 0);
        usleep(1500 * 1000);
        if (alive) for (int k = 0; k < 2; k++) rd_kafka_destroy(cs[k]);
        rd_kafka_destroy(p);
        rd_kafka_destroy(admin);
        printf("ok seen=%d\n", seen);
        return 0;
}
