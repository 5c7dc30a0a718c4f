# Evidence for docs/performance.md ("Visibility stalls").
#
# Does a read_committed consumer see a committed transaction's records while another
# transaction on the same partition is still open? Apache Kafka shows everything before the
# first offset of the oldest open transaction (its last stable offset); Tansu 0.6.0 shows
# nothing on the partition until no transaction is open at all.
#
#   python3 -m venv /tmp/ckv && /tmp/ckv/bin/pip install confluent-kafka==2.16.1
#   /tmp/ckv/bin/python bench/probes/tansu-read-committed.py 127.0.0.1:<broker port>
#
# Output on Tansu 0.6.0: the first three steps show [], the last all four records.
import sys, time, uuid
from confluent_kafka import Producer, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
topic = "lso-" + uuid.uuid4().hex[:6]
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()

def producer(name):
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": name + uuid.uuid4().hex[:4]})
    p.init_transactions()
    return p

A, B = producer("a"), producer("b")
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "lso-" + uuid.uuid4().hex[:4],
                     "isolation.level": "read_committed", "enable.auto.commit": False, "fetch.wait.max.ms": 10})
consumer.assign([TopicPartition(topic, 0, 0)])

def seen(label, seconds=1.5):
    got, end = [], time.time() + seconds
    while time.time() < end:
        m = consumer.poll(0.1)
        if m and not m.error():
            got.append(m.value().decode())
    print(label, "->", got)

A.begin_transaction(); A.produce(topic, b"a1"); A.flush()
B.begin_transaction(); B.produce(topic, b"b1"); B.flush()
A.commit_transaction()
seen("A1 committed, B1 open (Apache Kafka: nothing)")
A.begin_transaction(); A.produce(topic, b"a2"); A.flush()
B.commit_transaction()
seen("B1 committed, A2 open (Apache Kafka: a1 b1)")
B.begin_transaction(); B.produce(topic, b"b2"); B.flush()
A.commit_transaction()
seen("A2 committed, B2 open (Apache Kafka: a2)")
B.commit_transaction()
seen("all committed (Apache Kafka: b2)")
admin.delete_topics([topic])
