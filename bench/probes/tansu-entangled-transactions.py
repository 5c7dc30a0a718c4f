# Evidence for docs/performance.md ("Visibility stalls").
#
# Tansu 0.6.0 (tansu-storage/src/dynostore.rs, `txn_end` and `Meta::overlapping_transactions`)
# marks a transaction committed at EndTxn only when every other transaction that wrote one of
# its partitions earlier has ended too; otherwise it stays "prepared", invisible to
# read_committed readers, and the same producer's next transaction inherits it (same producer
# epoch, the partitions it wrote are not cleared). It becomes visible when a later EndTxn finds
# no open writer among its overlaps. Two consequences, both shown here:
#
#   1. Contagion: a producer whose commit was held on a shared partition also hides what its
#      next transactions write to partitions nobody else writes.
#   2. Ping-pong: two producers running back-to-back transactions on one shared partition keep
#      each other hidden for as long as both keep going; on disjoint partitions everything is
#      visible as it commits.
#
#   python3 -m venv /tmp/ckv && /tmp/ckv/bin/pip install confluent-kafka==2.16.1
#   /tmp/ckv/bin/python bench/probes/tansu-entangled-transactions.py 127.0.0.1:<broker port>
#
# Apache Kafka shows every committed record as soon as its partition's oldest open
# transaction allows (its last stable offset), so on Kafka step 1 shows [x1] and step 2 shows
# about the same counts for "shared" and "disjoint".
#
# Output on Tansu 0.6.0: step 1 [] then ['x1', 'x2']; step 2 shared
# 0/500 0/950 0/1400 0/1900 0/2350 0/2800, then 2900/2900 once both stopped; disjoint
# 500/500 1000/1000 ... 3000/3000.
import sys, threading, time, uuid
from confluent_kafka import Producer, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
admin = AdminClient({"bootstrap.servers": bootstrap})


def topic_with(partitions):
    name = "entangled-" + uuid.uuid4().hex[:6]
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result()
    return name


def producer(name):
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": name + uuid.uuid4().hex[:4], "linger.ms": 1})
    p.init_transactions()
    return p


def reader(topic, partitions):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "entangled-" + uuid.uuid4().hex[:4],
                  "isolation.level": "read_committed", "enable.auto.commit": False, "fetch.wait.max.ms": 10})
    c.assign([TopicPartition(topic, p, 0) for p in partitions])
    return c


def drain(consumer, seconds):
    got, end = [], time.time() + seconds
    while time.time() < end:
        m = consumer.poll(0.05)
        if m and not m.error():
            got.append(m.value().decode())
    return got


# 1. Contagion. A and B write p0; A commits first while B is open. Then A writes only p1,
#    which nobody else writes, and commits.
topic = topic_with(2)
A, B = producer("a"), producer("b")
p1_reader = reader(topic, [1])
A.begin_transaction(); A.produce(topic, b"a-p0", partition=0); A.flush()
B.begin_transaction(); B.produce(topic, b"b-p0", partition=0); B.flush()
A.commit_transaction()
A.begin_transaction(); A.produce(topic, b"x1", partition=1); A.flush()
A.commit_transaction()
print("1. A's second transaction wrote only p1 and committed; B still open on p0")
print("   p1 read_committed ->", drain(p1_reader, 1.5), "(Apache Kafka: ['x1'])")
B.commit_transaction()
A.begin_transaction(); A.produce(topic, b"x2", partition=1); A.flush()
A.commit_transaction()
print("   after B committed and A committed once more ->", drain(p1_reader, 1.5))
p1_reader.close()
admin.delete_topics([topic])


# 2. Ping-pong: two producers, back-to-back transactions of 50 records over ~100 ms each, out of
#    phase, for 3 s; the reader's count every half second.
def pingpong(shared):
    topic = topic_with(2)
    consumer = reader(topic, [0, 1])
    producers = [producer("pp0"), producer("pp1")]  # initialised before the clock starts
    stop = threading.Event()
    commits = [0, 0]

    def run(index):
        p, partition = producers[index], 0 if shared else index
        while not stop.is_set():
            p.begin_transaction()
            for _ in range(50):
                p.produce(topic, b"r", partition=partition)
                p.poll(0)
                time.sleep(0.002)
            p.commit_transaction()
            commits[index] += 1

    threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
        time.sleep(0.05)
    seen, timeline = 0, []
    for _ in range(6):
        seen += len(drain(consumer, 0.5))
        timeline.append("%d/%d" % (seen, 50 * sum(commits)))
    stop.set()
    for t in threads:
        t.join()
    seen += len(drain(consumer, 1.5))
    print("2. %-8s partition, seen/committed every 0.5 s: %s; 1.5 s after both stopped: %d/%d"
          % ("shared" if shared else "disjoint", " ".join(timeline), seen, 50 * sum(commits)))
    consumer.close()
    admin.delete_topics([topic])


pingpong(True)
pingpong(False)
