"""The official Python client (hazelcast-python-client 5.x) against running Grid members.

Run by scripts/python-client.ts, which starts three members and passes their ports. Every check
raises on failure (the process then exits non-zero); the last line printed is "python client: ok".
Written for this project; it uses only the client's public API and urllib for REST.
"""
import json
import sys
import time
import urllib.request

import hazelcast
from hazelcast.core import HazelcastJsonValue

ports = [int(p) for p in sys.argv[1:]]
host = "127.0.0.1"


def rest(port, method, path, body=None, content_type=None):
    req = urllib.request.Request(f"http://{host}:{port}{path}", data=body, method=method)
    if content_type is not None:
        req.add_header("Content-Type", content_type)
    with urllib.request.urlopen(req, timeout=10) as answer:
        return answer.status, answer.headers.get("Content-Type"), answer.read()


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"  ok: {what}")


client = hazelcast.HazelcastClient(
    cluster_name="dev",
    cluster_members=[f"{host}:{ports[0]}"],
    cluster_connect_timeout=30,
)
try:
    members = client.cluster_service.get_members()
    check(len(members) == len(ports), f"the client lists {len(ports)} members")
    check(sorted(m.address.port for m in members) == sorted(ports), "at their ports")

    m = client.get_map("py").blocking()
    # Python writes, REST reads on every member.
    m.put("s", "héllo")
    m.put("j", HazelcastJsonValue({"a": 1}))
    m.put("b", bytearray(b"\x00\xff\x01"))
    for port in ports:
        status, ctype, body = rest(port, "GET", "/grid/rest/maps/py/s")
        check(status == 200 and body.decode() == "héllo" and ctype == "text/plain; charset=utf-8", f"a str as text/plain on member {port}")
        status, ctype, body = rest(port, "GET", "/grid/rest/maps/py/j")
        check(json.loads(body) == {"a": 1} and ctype == "application/json", f"a HazelcastJsonValue as JSON on member {port}")
        status, ctype, body = rest(port, "GET", "/grid/rest/maps/py/b")
        check(body == b"\x00\xff\x01" and ctype == "application/octet-stream", f"a bytearray as bytes on member {port}")
    # REST writes, Python reads (the reference's REST values are a type this client cannot decode).
    rest(ports[1], "POST", "/grid/rest/maps/py/rt", "from REST".encode(), "text/plain")
    rest(ports[2], "POST", "/grid/rest/maps/py/rj", b'{"b":[1,2]}', "application/json")
    rest(ports[0], "POST", "/grid/rest/maps/py/rb", b"\x01\x02", "application/octet-stream")
    check(m.get("rt") == "from REST", "REST text/plain read as str")
    got = m.get("rj")
    check(isinstance(got, HazelcastJsonValue) and got.loads() == {"b": [1, 2]}, "REST JSON read as HazelcastJsonValue")
    check(bytes(m.get("rb")) == b"\x01\x02", "REST bytes read as a byte array")
    # The other map calls.
    check(m.put("s", "two") == "héllo", "put answers the old value")
    check(m.put_if_absent("s", "x") == "two" and m.put_if_absent("new", "n") is None, "putIfAbsent")
    check(m.replace("s", "three") == "two" and m.replace("absent", "x") is None, "replace")
    check(m.replace_if_same("s", "three", "four") and not m.replace_if_same("s", "three", "x"), "replaceIfSame")
    check(not m.remove_if_same("s", "x") and m.remove_if_same("s", "four"), "removeIfSame")
    check(m.contains_key("new") and not m.contains_key("s"), "containsKey")
    m.put_all({"pa1": "1", "pa2": "2"})
    check(m.get_all(["pa1", "pa2", "absent"]) == {"pa1": "1", "pa2": "2"}, "putAll and getAll")
    keys = set(m.key_set())
    check(keys == {"j", "b", "rt", "rj", "rb", "new", "pa1", "pa2"}, "keySet over every member's partitions")
    check(len(m.values()) == len(keys) and dict(m.entry_set())["pa2"] == "2", "values and entrySet")
    check(m.size() == len(keys) and not m.is_empty(), "size and isEmpty")
    m.delete("new")
    check(m.get("new") is None, "delete")
    # An entry's own TTL.
    m.set("ttl", "short", ttl=1)
    check(rest(ports[1], "GET", "/grid/rest/maps/py/ttl")[0] == 200, "a TTL entry is there")
    deadline = time.time() + 15
    while rest(ports[2], "GET", "/grid/rest/maps/py/ttl")[0] != 204:
        if time.time() > deadline:
            raise AssertionError("the TTL entry did not expire")
        time.sleep(0.2)
    check(m.get("ttl") is None, "gone after its TTL")
    try:
        m.put(42, "x")
        raise AssertionError("a number key was accepted")
    except hazelcast.errors.IllegalArgumentError as e:
        check("Grid keys are strings" in str(e), "a number key is refused, saying why")
    m.clear()
    check(m.size() == 0, "clear")

    # Queues, with REST in between.
    q = client.get_queue("pyq").blocking()
    check(q.offer("a"), "offer")
    rest(ports[1], "POST", "/grid/rest/queues/pyq", b"b", "text/plain")
    q.put("c")
    check(q.size() == 3 and q.peek() == "a", "size and peek")
    check(q.poll() == "a", "poll")
    drained = []
    check(q.drain_to(drained, 1) == 1 and drained == ["b"], "drainTo with a maximum")
    check(q.take() == "c" and q.is_empty(), "take and isEmpty")
    check(q.poll(timeout=0.3) is None, "a poll that times out")
    q.offer("d")
    q.clear()
    check(rest(ports[0], "GET", "/grid/rest/queues/pyq/size")[2] == b"0", "clear")

    # The CP subsystem (spec/cp.md): AtomicLong, AtomicReference, CountDownLatch, with REST between.
    cp = client.cp_subsystem
    ids = cp.get_atomic_long("py-ids").blocking()
    check(ids.increment_and_get() == 1 and ids.add_and_get(41) == 42, "AtomicLong incrementAndGet, addAndGet")
    check(rest(ports[1], "GET", "/grid/rest/cp/atomiclongs/py-ids")[2] == b'{"value":42}', "REST reads the client's AtomicLong")
    rest(ports[2], "POST", "/grid/rest/cp/atomiclongs/py-ids", b"9223372036854775807")
    check(ids.get() == 9223372036854775807, "the client reads REST's 64-bit value exactly")
    check(ids.get_and_add(1) == 9223372036854775807 and ids.get() == -9223372036854775808, "getAndAdd wraps")
    check(ids.compare_and_set(-9223372036854775808, 5) and not ids.compare_and_set(1, 2), "compareAndSet")
    try:
        ids.alter("a function the member would have to run")
        raise AssertionError("alter ran")
    except Exception as e:
        check("Java function" in str(e), f"alter is refused ({type(e).__name__}: the member cannot run a Java function)")
    grouped = cp.get_atomic_long("n@pygroup").blocking()
    grouped.set(7)
    check(rest(ports[0], "GET", "/grid/rest/cp/atomiclongs/n@pygroup")[2] == b'{"value":7}', "name@group")
    ref = cp.get_atomic_reference("py-ref").blocking()
    check(ref.is_none(), "a new AtomicReference is null")
    ref.set("v1")
    status, ctype, body = rest(ports[1], "GET", "/grid/rest/cp/atomicrefs/py-ref")
    check(body == b"v1" and ctype.startswith("text/plain"), "REST reads the client's reference")
    check(ref.compare_and_set("v1", "v2") and not ref.compare_and_set("v1", "v3"), "AtomicReference compareAndSet")
    check(ref.get_and_set("v4") == "v2" and ref.contains("v4"), "getAndSet and contains")
    ref.clear()
    check(rest(ports[2], "GET", "/grid/rest/cp/atomicrefs/py-ref")[0] == 204, "clear leaves null (REST 204)")
    latch = cp.get_count_down_latch("py-latch").blocking()
    check(latch.try_set_count(2) and not latch.try_set_count(3), "trySetCount")
    latch.count_down()
    rest(ports[1], "POST", "/grid/rest/cp/countdownlatches/py-latch/countDown")
    check(latch.get_count() == 0 and latch.await_latch(1), "countDown through REST and the client, await")
    # FencedLock (re-entrant per Python thread) and a session-aware Semaphore, with REST between.
    lock = cp.get_lock("py-lock").blocking()
    fence = lock.lock()
    check(fence > 0 and lock.lock() == fence and lock.get_lock_count() == 2, "lock, re-entry keeps the fence")
    status, _, body = rest(ports[2], "GET", "/grid/rest/cp/locks/py-lock")
    check(status == 200 and json.loads(body)["fence"] == fence and json.loads(body)["lockCount"] == 2, "REST sees the client's lock")
    lock.unlock()
    lock.unlock()
    check(not lock.is_locked(), "unlock twice frees it")
    session = json.loads(rest(ports[0], "POST", "/grid/rest/cp/sessions/default")[2])["sessionId"]
    check(rest(ports[1], "POST", "/grid/rest/cp/locks/py-lock/lock", str(session).encode())[0] == 200, "REST takes the lock")
    check(lock.try_lock(0.2) == 0, "held through REST: try_lock times out")
    rest(ports[2], "DELETE", f"/grid/rest/cp/sessions/default/{session}")
    check(lock.try_lock(5) > fence, "the closed REST session released it; the fence rose")
    lock.unlock()
    sem = cp.get_semaphore("py-sem").blocking()
    check(sem.init(2) and not sem.init(3), "Semaphore init once")
    sem.acquire(2)
    check(not sem.try_acquire(1, 0.1), "no permit left")
    sem.release(1)
    check(sem.available_permits() == 1 and sem.drain_permits() == 1, "release, drain")
    sem.release(2)
    check(json.loads(rest(ports[1], "GET", "/grid/rest/cp/semaphores/py-sem")[2])["available"] == 2, "REST sees the permits")
finally:
    client.shutdown()
print("python client: ok")
