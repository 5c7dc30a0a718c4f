#include <librdkafka/rdkafka.h>
/* librdkafka's in-process mock cluster (test.mock.num.brokers), used by tests. */
#include <librdkafka/rdkafka_mock.h>
