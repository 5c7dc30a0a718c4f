# Evidence for docs/performance.md ("What an idle consumer costs").
#
# What an idle consumer's fetch.wait.max.ms costs on a broker, in latency and in broker CPU:
# for each wait, one read_committed consumer follows a 4-partition topic (like the planner on
# herald.events) while 40 single records are produced at random 50-250 ms intervals; it
# prints publish-to-read p50/p90/max and the broker's CPU over the run (from /proc).
#
#   python3 -m venv /tmp/ckv && /tmp/ckv/bin/pip install confluent-kafka==2.16.1
#   scripts/stack up && . .herald/run/endpoints.env
#   /tmp/ckv/bin/python bench/probes/tansu-fetch-wait.py $HERALD_KAFKA_BROKERS $(cat .herald/run/kafka.pid)
#
# Output on Tansu 0.6.0 (the times include the producer's own flush):
#   wait   5 ms: p50 2.6 p90 4.2 max 4.5 ms; broker 13.2 % of a core
#   wait  10 ms: p50 3.2 p90 5.5 max 6.7 ms; broker 9.5 %
#   wait  20 ms: p50 3.9 p90 9.4 max 10.5 ms; broker 6.0 %
#   wait  30 ms: p50 4.7 p90 13.5 max 15.5 ms; broker 4.8 %
#   wait  50 ms: p50 8.7 p90 25.6 max 27.3 ms; broker 3.5 %
# Tansu reads its storage for every fetch request and holds an empty answer for part of the
# wait, so the cost falls with the wait and the delay grows with it. Apache Kafka answers as
# soon as a record arrives: there the delay stays about the same at every wait and an idle
# consumer costs almost nothing.
import os, random, sys, time
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, broker_pid = sys.argv[1], int(sys.argv[2])
topic = f"fetch-wait-{int(time.time())}"


def broker_cpu_seconds():
    fields = open(f"/proc/{broker_pid}/stat").read().split(")")[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, 4, 1)])[topic].result()
time.sleep(1)
producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
for wait in (5, 10, 20, 30, 50):
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"{topic}-{wait}", "fetch.wait.max.ms": wait,
        "enable.auto.commit": False, "isolation.level": "read_committed",
    })
    consumer.assign([TopicPartition(topic, p, -1) for p in range(4)])
    for _ in range(10):
        consumer.poll(0.05)
    cpu_start, wall_start = broker_cpu_seconds(), time.time()
    delays = []
    for i in range(40):
        time.sleep(random.uniform(0.05, 0.25))
        sent = time.time()
        producer.produce(topic, b"x", partition=i % 4)
        producer.flush()
        while True:
            message = consumer.poll(1.0)
            if message is not None and not message.error():
                break
        delays.append(1000 * (time.time() - sent))
    busy = 100 * (broker_cpu_seconds() - cpu_start) / (time.time() - wall_start)
    consumer.close()
    delays.sort()
    print(f"wait {wait:3d} ms: p50 {delays[20]:.1f} p90 {delays[36]:.1f} max {delays[-1]:.1f} ms; broker {busy:.1f} % of a core")
