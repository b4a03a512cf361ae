"""Conformance tests of the devhost's Service Bus emulator through azure-servicebus for Python.

Run by ../servicebus-python.test.ts, which starts the emulator and sets SERVICEBUS_CONNECTION_STRING,
one SERVICEBUS_QUEUE_<ROLE> per test class and, for a client that connects over TLS (azure-servicebus
7.8 always does, on port 5671), SERVICEBUS_CA_FILE (the emulator's certificate, trusted through
connection_verify). Written for Debian bookworm's python3-azure (azure-servicebus 7.8.2, on
python3-uamqp 1.5.3) and trixie's (7.14, on its own pure-Python AMQP stack); where the two clients
differ, the test says so.
"""

import datetime
import importlib.util
import os
import re
import time
import unittest
import uuid

from azure.servicebus import (
    AutoLockRenewer,
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusAuthenticationError,
    ServiceBusCommunicationError,
    ServiceBusError,
)

# azure-servicebus 7.9 and later speak AMQP with their own pure-Python stack, _pyamqp; 7.8 with uamqp.
PURE_PYTHON_AMQP = importlib.util.find_spec("azure.servicebus._pyamqp") is not None

# The Standard tier's limit, which the emulator enforces by default.
STANDARD_TIER_MAX_MESSAGE_SIZE = 256 * 1024


def required(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(
            name + " is not set: run these tests through packages/devhost/test/conformance/"
            "servicebus-python.test.ts, which starts the emulator and sets it."
        )
    return value


def queue(role):
    return required("SERVICEBUS_QUEUE_" + role.upper().replace("-", "_"))


def client(connection_string=None):
    # One retry and a short auth timeout: against a loopback emulator a slow answer is a bug. Over TLS
    # (7.8.2 knows nothing else) the emulator's certificate is trusted through connection_verify; 7.14
    # takes the plain connection string with UseDevelopmentEmulator=true.
    ca_file = os.environ.get("SERVICEBUS_CA_FILE")
    return ServiceBusClient.from_connection_string(
        connection_string or required("SERVICEBUS_CONNECTION_STRING"),
        retry_total=1,
        auth_timeout=10,
        **({"connection_verify": ca_file} if ca_file else {}),
    )


def receive_one(receiver, seconds=5):
    messages = receiver.receive_messages(max_message_count=1, max_wait_time=seconds)
    if len(messages) != 1:
        raise AssertionError("expected one message within %s s, got %d" % (seconds, len(messages)))
    return messages[0]


class SendReceiveTests(unittest.TestCase):
    def test_sends_receives_peek_locked_and_completes(self):
        with client() as sb:
            name = queue("py-send-receive")
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("hello", message_id="py-1", content_type="text/plain"))
            with sb.get_queue_receiver(name) as receiver:
                message = receive_one(receiver)
                self.assertEqual(str(message), "hello")
                self.assertEqual(message.message_id, "py-1")
                self.assertEqual(message.content_type, "text/plain")
                self.assertEqual(message.delivery_count, 0)  # the raw AMQP count, as the service sends it
                self.assertIsNotNone(message.lock_token)
                self.assertGreater(message.sequence_number, 0)
                self.assertGreater(message.locked_until_utc, datetime.datetime.now(datetime.timezone.utc))
                receiver.complete_message(message)
                self.assertEqual(receiver.receive_messages(max_message_count=1, max_wait_time=1), [])

    def test_sends_a_batch_and_receives_and_deletes(self):
        with client() as sb:
            name = queue("py-batch")
            with sb.get_queue_sender(name) as sender:
                batch = sender.create_message_batch()
                for body in ["a", "b", "c"]:
                    batch.add_message(ServiceBusMessage(body))
                sender.send_messages(batch)
            with sb.get_queue_receiver(name, receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as receiver:
                bodies = []
                deadline = time.time() + 10
                while len(bodies) < 3 and time.time() < deadline:
                    bodies += [str(m) for m in receiver.receive_messages(max_message_count=3, max_wait_time=2)]
                self.assertEqual(bodies, ["a", "b", "c"])
                self.assertEqual(receiver.peek_messages(max_message_count=10), [])


    def test_a_message_over_the_tier_limit_is_refused_and_one_under_it_arrives_whole(self):
        with client() as sb:
            name = queue("py-sizes")
            with sb.get_queue_sender(name) as sender:
                with self.assertRaises(MessageSizeExceededError):
                    sender.send_messages(ServiceBusMessage(b"\x01" * (STANDARD_TIER_MAX_MESSAGE_SIZE + 1024)))
                under = os.urandom(STANDARD_TIER_MAX_MESSAGE_SIZE - 4 * 1024)
                sender.send_messages(ServiceBusMessage(under, message_id="py-large"))
            with sb.get_queue_receiver(name, receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as receiver:
                message = receive_one(receiver)
                self.assertEqual(message.message_id, "py-large")
                self.assertEqual(b"".join(message.body), under)
                self.assertEqual(receiver.receive_messages(max_message_count=1, max_wait_time=1), [])


class SettlementTests(unittest.TestCase):
    def test_abandon_redelivers_with_a_higher_delivery_count(self):
        with client() as sb:
            name = queue("py-abandon")
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("again"))
            with sb.get_queue_receiver(name) as receiver:
                first = receive_one(receiver)
                receiver.abandon_message(first)
                second = receive_one(receiver)
                self.assertEqual(second.sequence_number, first.sequence_number)
                self.assertEqual(second.delivery_count, first.delivery_count + 1)
                receiver.complete_message(second)

    def test_dead_letter_with_reason_and_description(self):
        with client() as sb:
            name = queue("py-dead-letter")
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("poison", message_id="py-dl"))
            with sb.get_queue_receiver(name) as receiver:
                receiver.dead_letter_message(receive_one(receiver), reason="Bad", error_description="Not good.")
            with sb.get_queue_receiver(name, sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dead_letters:
                dead = receive_one(dead_letters)
                self.assertEqual(dead.message_id, "py-dl")
                self.assertEqual(dead.dead_letter_reason, "Bad")
                self.assertEqual(dead.dead_letter_error_description, "Not good.")
                self.assertIsNone(dead.dead_letter_source)
                dead_letters.complete_message(dead)

    def test_reaching_max_delivery_count_moves_the_message_to_the_dead_letter_queue(self):
        with client() as sb:
            name = queue("py-max-delivery")  # MaxDeliveryCount 2
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("doomed", message_id="py-md"))
            with sb.get_queue_receiver(name) as receiver:
                for _ in range(2):
                    receiver.abandon_message(receive_one(receiver))
                self.assertEqual(receiver.receive_messages(max_message_count=1, max_wait_time=1), [])
            with sb.get_queue_receiver(name, sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dead_letters:
                dead = receive_one(dead_letters)
                self.assertEqual(dead.message_id, "py-md")
                self.assertEqual(dead.dead_letter_reason, "MaxDeliveryCountExceeded")
                dead_letters.complete_message(dead)

    def test_settling_after_the_lock_lapsed_fails_and_the_message_comes_back(self):
        with client() as sb:
            name = queue("py-lock-lost")  # LockDuration PT1S
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("slow"))
            with sb.get_queue_receiver(name) as receiver:
                message = receive_one(receiver)
                time.sleep(1.5)
                # Both clients refuse by themselves, from the message's locked_until (x-opt-locked-until):
                # 7.14 with MessageLockLostError, 7.8.2 with a plain ServiceBusError.
                with self.assertRaisesRegex(ServiceBusError, "lock .* has expired"):
                    receiver.complete_message(message)
                again = receive_one(receiver)
                self.assertEqual(again.delivery_count, message.delivery_count + 1)
                receiver.complete_message(again)

    def test_defer_and_receive_deferred_by_sequence_number(self):
        with client() as sb:
            name = queue("py-deferral")
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("later", message_id="py-def"))
            with sb.get_queue_receiver(name) as receiver:
                message = receive_one(receiver)
                receiver.defer_message(message)
                self.assertEqual(receiver.receive_messages(max_message_count=1, max_wait_time=1), [])
                [deferred] = receiver.receive_deferred_messages([message.sequence_number])
                self.assertEqual(deferred.message_id, "py-def")
                self.assertIsNotNone(deferred.lock_token)
                receiver.renew_message_lock(deferred)
                receiver.complete_message(deferred)
                with self.assertRaises(ServiceBusError):
                    receiver.receive_deferred_messages([message.sequence_number])

    def test_renew_lock_extends_it(self):
        with client() as sb:
            name = queue("py-locks")  # LockDuration PT5S
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("held"))
            with sb.get_queue_receiver(name) as receiver:
                message = receive_one(receiver)
                first = message.locked_until_utc
                time.sleep(1)
                renewed = receiver.renew_message_lock(message)
                self.assertGreater(renewed, first)
                receiver.complete_message(message)


    def test_auto_lock_renewer_keeps_the_lock_past_its_duration(self):
        with client() as sb:
            name = queue("py-renewal")  # LockDuration PT5S, the shortest Azure allows
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("slow", message_id="py-slow"))
            renewer = AutoLockRenewer(max_lock_renewal_duration=60)
            try:
                with sb.get_queue_receiver(name, auto_lock_renewer=renewer) as receiver:
                    message = receive_one(receiver)
                    first = message.locked_until_utc
                    time.sleep(11)  # 2.2 lock durations: without renewal the lock lapses
                    self.assertGreater(message.locked_until_utc, first + datetime.timedelta(seconds=5))
                    self.assertIsNone(message.auto_renew_error)
                    receiver.complete_message(message)  # refused if the lock had lapsed
                    self.assertEqual(receiver.receive_messages(max_message_count=1, max_wait_time=1), [])
            finally:
                renewer.close()


class BrokerFeatureTests(unittest.TestCase):
    def test_schedule_and_cancel(self):
        with client() as sb:
            name = queue("py-scheduling")
            at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2)
            with sb.get_queue_sender(name) as sender:
                [kept] = sender.schedule_messages(ServiceBusMessage("kept"), at)
                [cancelled] = sender.schedule_messages(ServiceBusMessage("cancelled"), at)
                self.assertGreater(cancelled, kept)
                sender.cancel_scheduled_messages(cancelled)
            with sb.get_queue_receiver(name) as receiver:
                [peeked] = receiver.peek_messages(max_message_count=10)
                self.assertEqual(peeked.sequence_number, kept)
                self.assertEqual(peeked.scheduled_enqueue_time_utc.replace(microsecond=0), at.replace(microsecond=0))
                message = receive_one(receiver, 6)
                self.assertEqual(str(message), "kept")
                receiver.complete_message(message)
                self.assertEqual(receiver.receive_messages(max_message_count=1, max_wait_time=1), [])

    def test_an_expired_message_goes_to_the_dead_letter_queue(self):
        with client() as sb:
            name = queue("py-expiry")  # DeadLetteringOnMessageExpiration
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(
                    ServiceBusMessage("stale", message_id="py-ttl", time_to_live=datetime.timedelta(seconds=1))
                )
            time.sleep(1.5)
            with sb.get_queue_receiver(name) as receiver:
                self.assertEqual(receiver.receive_messages(max_message_count=1, max_wait_time=1), [])
            with sb.get_queue_receiver(name, sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dead_letters:
                dead = receive_one(dead_letters)
                self.assertEqual(dead.message_id, "py-ttl")
                self.assertEqual(dead.dead_letter_reason, "TTLExpiredException")
                dead_letters.complete_message(dead)

    def test_duplicate_detection_drops_a_resent_message_id(self):
        with client() as sb:
            name = queue("py-duplicates")  # RequiresDuplicateDetection
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage("first", message_id="py-dup"))
                sender.send_messages(ServiceBusMessage("again", message_id="py-dup"))
                sender.send_messages(ServiceBusMessage("other", message_id="py-other"))
            with sb.get_queue_receiver(name, receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as receiver:
                bodies = []
                while True:
                    got = receiver.receive_messages(max_message_count=10, max_wait_time=1)
                    if not got:
                        break
                    bodies += [str(m) for m in got]
                self.assertEqual(bodies, ["first", "other"])

    def test_peek_browses_without_locking(self):
        with client() as sb:
            name = queue("py-peek")
            with sb.get_queue_sender(name) as sender:
                sender.send_messages([ServiceBusMessage(body) for body in ["p1", "p2", "p3"]])
            with sb.get_queue_receiver(name) as receiver:
                peeked = receiver.peek_messages(max_message_count=10)
                self.assertEqual([str(m) for m in peeked], ["p1", "p2", "p3"])
                later = receiver.peek_messages(max_message_count=10, sequence_number=peeked[1].sequence_number)
                self.assertEqual([str(m) for m in later], ["p2", "p3"])
                first = receive_one(receiver)
                self.assertEqual((str(first), first.delivery_count), ("p1", 0))
                receiver.complete_message(first)

    def test_application_properties_keep_their_types(self):
        sent = {
            "int": 42,
            "negative": -7,
            "big": 1 << 40,
            "uuid": uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e"),
            "datetime": datetime.datetime(2026, 11, 29, 12, 34, 56, 789000, tzinfo=datetime.timezone.utc),
            "string": "text",
            "binary": b"\x09\x08\x07",
            "double": 3.25,
            "bool": True,
        }
        if PURE_PYTHON_AMQP:
            # _pyamqp encodes every Python int in application properties as an AMQP int and refuses one
            # that does not fit ("Value supplied for int invalid"), before anything is sent.
            del sent["big"]
        with client() as sb:
            name = queue("py-properties")
            with sb.get_queue_sender(name) as sender:
                sender.send_messages(ServiceBusMessage(b"\x00\x01\xfe", application_properties=sent, subject="s"))
            with sb.get_queue_receiver(name) as receiver:
                message = receive_one(receiver)
                self.assertEqual(b"".join(message.body), b"\x00\x01\xfe")
                self.assertEqual(message.subject, "s")
                # uamqp hands keys and string values over as bytes; values keep their Python types.
                got = {key.decode() if isinstance(key, bytes) else key: value
                       for key, value in message.application_properties.items()}
                for key, value in sent.items():
                    received = got[key]
                    if isinstance(value, str) and isinstance(received, bytes):
                        received = received.decode()
                    if isinstance(value, datetime.datetime) and isinstance(received, int):
                        received = datetime.datetime.fromtimestamp(received / 1000, datetime.timezone.utc)
                    self.assertEqual(type(received), type(value), key)
                    self.assertEqual(received, value, key)
                receiver.complete_message(message)


class RefusalTests(unittest.TestCase):
    def test_a_wrong_sas_key_is_refused_with_an_authentication_error(self):
        wrong = re.sub(r"SharedAccessKey=[^;]*", "SharedAccessKey=not-the-key", required("SERVICEBUS_CONNECTION_STRING"))
        started = time.time()
        with client(wrong) as sb:
            with self.assertRaises(ServiceBusAuthenticationError):
                with sb.get_queue_sender(queue("py-refusals")) as sender:
                    sender.send_messages(ServiceBusMessage("x"))
        self.assertLess(time.time() - started, 10, "the refusal came at once")

    def test_an_unknown_queue_is_refused_as_not_found(self):
        # 7.8.2 raises ServiceBusCommunicationError for amqp:not-found on a link (uamqp's LinkDetach is a
        # connection error); 7.14 maps the condition to MessagingEntityNotFoundError. Both keep Service
        # Bus's wording.
        expected = MessagingEntityNotFoundError if PURE_PYTHON_AMQP else ServiceBusCommunicationError
        with client() as sb:
            with self.assertRaisesRegex(expected, "could not be found"):
                with sb.get_queue_sender("no-such-queue") as sender:
                    sender.send_messages(ServiceBusMessage("x"))
            with self.assertRaisesRegex(expected, "could not be found"):
                with sb.get_queue_receiver("no-such-queue") as receiver:
                    receiver.receive_messages(max_message_count=1, max_wait_time=2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
