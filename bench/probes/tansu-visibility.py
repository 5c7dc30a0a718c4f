# Evidence for docs/performance.md ("Visibility stalls"): cases in which a
# read_committed consumer might not see committed records on Tansu, each printed with what it saw.
#
#   python3 -m venv /tmp/ckv && /tmp/ckv/bin/pip install confluent-kafka==2.16.1
#   scripts/stack up && . .herald/run/endpoints.env
#   /tmp/ckv/bin/python bench/probes/tansu-visibility.py $HERALD_KAFKA_BROKERS
#
# Output on Tansu 0.6.0: every case sees the committed records at once, and the
# bulk stream is read back as fast as it commits with or without the small transactions.
import sys, threading, time, uuid
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
admin = AdminClient({"bootstrap.servers": bootstrap})

def topic(partitions):
    name = "vis-" + uuid.uuid4().hex[:8]
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result()
    return name

def transactional(name, linger=0):
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": name + uuid.uuid4().hex[:6],
                         "linger.ms": linger, "compression.type": "lz4"})
    producer.init_transactions()
    return producer

def reader(assignments):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "vis-" + uuid.uuid4().hex[:6],
                         "isolation.level": "read_committed", "fetch.wait.max.ms": 10, "enable.auto.commit": False})
    consumer.assign([TopicPartition(t, p, 0) for t, p in assignments])
    return consumer

def drain(consumer, seconds=2.0):
    seen, end = [], time.time() + seconds
    while time.time() < end:
        message = consumer.poll(0.1)
        if message is not None and not message.error():
            seen.append(message.value().decode())
    return seen

def open_elsewhere(label, same_topic, reader_also_on_open_partition):
    t = topic(2)
    other = t if same_topic else topic(1)
    a, b = transactional("a"), transactional("b")
    consumer = reader([(t, 0), (t, 1)] if reader_also_on_open_partition else [(t, 0)])
    a.begin_transaction(); a.produce(other, b"open", partition=1 if same_topic else 0); a.flush()
    b.begin_transaction(); b.produce(t, b"committed", partition=0); b.commit_transaction()
    print(f"{label}: sees {drain(consumer)}", flush=True)
    a.commit_transaction(); consumer.close()

def bulk_with_small_transactions(with_small):
    t = topic(8)
    bulk, small = transactional("bulk", linger=5), transactional("small")
    consumer = reader([(t, p) for p in range(2, 8)])
    stop, payload, started = False, b"x" * 700, time.time()
    def run_bulk():
        for n in range(12):
            bulk.begin_transaction()
            for i in range(20_000):
                while True:
                    try:
                        bulk.produce(t, payload, key=str(i).encode(), partition=2 + n % 6); break
                    except BufferError:
                        bulk.poll(0.01)
            bulk.commit_transaction()
    def run_small():
        n = 0
        while not stop:
            small.begin_transaction(); small.produce(t, b"p", partition=n % 2); small.commit_transaction()
            n += 1; time.sleep(0.05)
    threads = [threading.Thread(target=run_bulk)] + ([threading.Thread(target=run_small)] if with_small else [])
    for thread in threads: thread.start()
    seen = 0
    while seen < 240_000 and time.time() - started < 60:
        seen += len([m for m in consumer.consume(10_000, 0.05) if not m.error()])
    print(f"bulk stream {'with' if with_small else 'without'} small transactions: {seen} records seen after {time.time() - started:.2f} s", flush=True)
    stop = True
    for thread in threads: thread.join()
    consumer.close()


def bulk_with_offsets(with_small):
    """Like bulk_with_small_transactions, but every transaction also commits consumer offsets
    (sendOffsetsToTransaction), as Herald's lanes and planner do."""
    t, inputs, small_inputs = topic(8), topic(1), topic(1)
    feeder = Producer({"bootstrap.servers": bootstrap})
    for i in range(12): feeder.produce(inputs, b"task")
    for i in range(400): feeder.produce(small_inputs, b"event")
    feeder.flush()
    def group_consumer(source):
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "vis-" + uuid.uuid4().hex[:6],
                             "isolation.level": "read_committed", "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        consumer.subscribe([source])
        return consumer
    bulk, small = transactional("bulk", linger=5), transactional("small")
    bulk_in, small_in = group_consumer(inputs), group_consumer(small_inputs)
    consumer = reader([(t, p) for p in range(2, 8)])
    stop, payload, started = False, b"x" * 700, time.time()
    commits = []
    def next_message(source):
        while True:
            message = source.poll(0.5)
            if message is not None and not message.error(): return message
    def run_bulk():
        for n in range(12):
            message = next_message(bulk_in)
            bulk.begin_transaction()
            for i in range(20_000):
                while True:
                    try:
                        bulk.produce(t, payload, key=str(i).encode(), partition=2 + n % 6); break
                    except BufferError:
                        bulk.poll(0.01)
            bulk.send_offsets_to_transaction([TopicPartition(inputs, 0, message.offset() + 1)], bulk_in.consumer_group_metadata())
            bulk.commit_transaction()
            commits.append(time.time())
    def run_small():
        n = 0
        while not stop:
            message = next_message(small_in)
            small.begin_transaction(); small.produce(t, b"p", partition=n % 2)
            small.send_offsets_to_transaction([TopicPartition(small_inputs, 0, message.offset() + 1)], small_in.consumer_group_metadata())
            small.commit_transaction()
            n += 1; time.sleep(0.05)
    threads = [threading.Thread(target=run_bulk)] + ([threading.Thread(target=run_small)] if with_small else [])
    for thread in threads: thread.start()
    seen, first = 0, None
    while seen < 240_000 and time.time() - started < 90:
        batch = len([m for m in consumer.consume(10_000, 0.05) if not m.error()])
        if batch and first is None: first = time.time()
        seen += batch
    done = time.time()
    label = "and small transactions with offsets" if with_small else "alone"
    if commits and first:
        print(f"bulk stream with offsets {label}: first record seen {first - commits[0]:+.2f} s after the first commit, "
              f"all {seen} seen {done - commits[-1]:+.2f} s after the last ({commits[-1] - commits[0]:.2f} s of commits)", flush=True)
    else:
        print(f"bulk stream with offsets {label}: {seen} records seen, {len(commits)} commits", flush=True)
    stop = True
    for thread in threads: thread.join()
    consumer.close()

open_elsewhere("open transaction on p1 of the same topic, reader on p0", True, False)
open_elsewhere("open transaction on another topic, reader on p0", False, False)
open_elsewhere("open transaction on p1 of the same topic, reader on p0 and p1", True, True)
bulk_with_small_transactions(False)
bulk_with_small_transactions(True)
bulk_with_offsets(False)
bulk_with_offsets(True)
