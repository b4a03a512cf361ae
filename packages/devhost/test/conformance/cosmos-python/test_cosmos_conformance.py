"""The devhost Cosmos DB emulator against Python's azure-cosmos 3.1.1 (Debian's python3-azure-cosmos).

Run by ../cosmos-python.test.ts, which starts the emulator and passes its address in COSMOS_* variables. The
client keeps its default connection policy (endpoint discovery on): the emulator advertises the http endpoint
it serves. 3.1.1 is the v3 SDK (documents as dicts, links as paths); its paged queries continue within one
iterator only, as the SDK offers no way to start a query from a saved continuation token.
"""
import os
import unittest
import uuid

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.documents as documents
import azure.cosmos.errors as errors


def required(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(name + " is not set: run this through packages/devhost/test/conformance/cosmos-python.test.ts")
    return value


ENDPOINT = required("COSMOS_ENDPOINT")
KEY = required("COSMOS_KEY")
DATABASE = required("COSMOS_DATABASE")
CONFIGURED_CONTAINER = required("COSMOS_CONTAINER")

CLIENT = cosmos_client.CosmosClient(ENDPOINT, {"masterKey": KEY}, documents.ConnectionPolicy())
DATABASE_LINK = "dbs/" + DATABASE
CROSS_PARTITION = {"enableCrossPartitionQuery": True}


def unique(prefix):
    return prefix + "-" + uuid.uuid4().hex


def new_container(prefix):
    container = CLIENT.CreateContainer(DATABASE_LINK, {"id": unique(prefix), "partitionKey": {"paths": ["/orderId"]}})
    return DATABASE_LINK + "/colls/" + container["id"]


def status_of(call):
    """The HTTP status a call failed with, or 'ok' when it did not fail."""
    try:
        call()
        return "ok"
    except errors.HTTPFailure as failure:
        return failure.status_code


def new_order(**fields):
    order = {"id": unique("item"), "orderId": unique("order"), "status": "Pending", "rank": 1}
    order.update(fields)
    return order


class DatabasesAndContainers(unittest.TestCase):
    def test_creates_a_database_reads_it_back_and_refuses_a_second_with_the_same_id(self):
        database_id = unique("db")
        CLIENT.CreateDatabase({"id": database_id})
        self.assertEqual(CLIENT.ReadDatabase("dbs/" + database_id)["id"], database_id)
        self.assertEqual(status_of(lambda: CLIENT.CreateDatabase({"id": database_id})), 409)

    def test_creates_a_container_without_a_kind_and_reads_back_a_hash_partition_key(self):
        container_id = unique("orders")
        CLIENT.CreateContainer(DATABASE_LINK, {"id": container_id, "partitionKey": {"paths": ["/orderId"]}})
        read = CLIENT.ReadContainer(DATABASE_LINK + "/colls/" + container_id)
        self.assertEqual(read["partitionKey"], {"paths": ["/orderId"], "kind": "Hash"})

    def test_reads_the_container_declared_in_the_emulator_config_as_hash_partitioned(self):
        read = CLIENT.ReadContainer(DATABASE_LINK + "/colls/" + CONFIGURED_CONTAINER)
        self.assertEqual(read["partitionKey"], {"paths": ["/orderId"], "kind": "Hash"})

    def test_reading_a_missing_container_is_404(self):
        self.assertEqual(status_of(lambda: CLIENT.ReadContainer(DATABASE_LINK + "/colls/no-such-container")), 404)


class Items(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.link = new_container("items")

    def doc(self, order):
        return self.link + "/docs/" + order["id"]

    def test_creates_an_item_and_reads_it_back_with_the_same_etag(self):
        order = new_order()
        created = CLIENT.CreateItem(self.link, order)
        read = CLIENT.ReadItem(self.doc(order), {"partitionKey": order["orderId"]})
        self.assertEqual({k: read[k] for k in order}, order)
        self.assertEqual(read["_etag"], created["_etag"])

    def test_creating_an_id_that_exists_in_the_partition_is_409(self):
        order = new_order()
        CLIENT.CreateItem(self.link, order)
        self.assertEqual(status_of(lambda: CLIENT.CreateItem(self.link, dict(order, status="Other"))), 409)
        self.assertEqual(CLIENT.ReadItem(self.doc(order), {"partitionKey": order["orderId"]})["status"], "Pending")

    def test_reading_a_missing_item_is_404(self):
        missing = self.link + "/docs/no-such-item"
        self.assertEqual(status_of(lambda: CLIENT.ReadItem(missing, {"partitionKey": "no-such-order"})), 404)

    def test_replaces_with_the_current_etag_and_refuses_a_stale_one_with_412(self):
        order = new_order()
        created = CLIENT.CreateItem(self.link, order)
        condition = {"type": "IfMatch", "condition": created["_etag"]}
        replaced = CLIENT.ReplaceItem(self.doc(order), dict(order, status="Processing"), {"accessCondition": condition})
        self.assertNotEqual(replaced["_etag"], created["_etag"])
        stale = status_of(lambda: CLIENT.ReplaceItem(self.doc(order), dict(order, status="Stolen"), {"accessCondition": condition}))
        self.assertEqual(stale, 412)
        self.assertEqual(CLIENT.ReadItem(self.doc(order), {"partitionKey": order["orderId"]})["status"], "Processing")

    def test_upsert_creates_then_replaces(self):
        order = new_order()
        CLIENT.UpsertItem(self.link, order)
        CLIENT.UpsertItem(self.link, dict(order, rank=2))
        self.assertEqual(CLIENT.ReadItem(self.doc(order), {"partitionKey": order["orderId"]})["rank"], 2)

    def test_replacing_or_deleting_a_missing_item_is_404(self):
        order = new_order()
        self.assertEqual(status_of(lambda: CLIENT.ReplaceItem(self.doc(order), order)), 404)
        self.assertEqual(status_of(lambda: CLIENT.DeleteItem(self.doc(order), {"partitionKey": order["orderId"]})), 404)

    def test_deletes_with_the_current_etag_after_refusing_a_stale_one(self):
        order = new_order()
        created = CLIENT.CreateItem(self.link, order)
        replaced = CLIENT.ReplaceItem(self.doc(order), dict(order, rank=5))
        stale = {"partitionKey": order["orderId"], "accessCondition": {"type": "IfMatch", "condition": created["_etag"]}}
        self.assertEqual(status_of(lambda: CLIENT.DeleteItem(self.doc(order), stale)), 412)
        current = {"partitionKey": order["orderId"], "accessCondition": {"type": "IfMatch", "condition": replaced["_etag"]}}
        CLIENT.DeleteItem(self.doc(order), current)
        self.assertEqual(status_of(lambda: CLIENT.ReadItem(self.doc(order), {"partitionKey": order["orderId"]})), 404)


class Queries(unittest.TestCase):
    # 12 orders over 3 partitions; rank is unique, status splits them 8 Pending / 4 Done.
    SEEDED = [
        {"id": "q-%02d" % i, "orderId": "part-%d" % (i % 3), "status": "Done" if i % 3 == 2 else "Pending", "rank": (i * 5) % 12}
        for i in range(12)
    ]

    @classmethod
    def setUpClass(cls):
        cls.link = new_container("queries")
        for order in cls.SEEDED:
            CLIENT.CreateItem(cls.link, order)

    def query(self, query, options):
        return list(CLIENT.QueryItems(self.link, query, options))

    def test_orders_items_from_every_partition(self):
        found = self.query("SELECT * FROM c ORDER BY c.rank DESC", CROSS_PARTITION)
        self.assertEqual([o["rank"] for o in found], sorted((o["rank"] for o in self.SEEDED), reverse=True))

    def test_filters_with_a_parameterised_where(self):
        spec = {
            "query": "SELECT * FROM c WHERE c.status = @status AND c.rank >= @min",
            "parameters": [{"name": "@status", "value": "Pending"}, {"name": "@min", "value": 4}],
        }
        expected = sorted(o["id"] for o in self.SEEDED if o["status"] == "Pending" and o["rank"] >= 4)
        self.assertEqual(sorted(o["id"] for o in self.query(spec, CROSS_PARTITION)), expected)

    def test_a_partition_key_option_scopes_the_query_and_the_read_feed(self):
        expected = sorted(o["id"] for o in self.SEEDED if o["orderId"] == "part-1")
        self.assertEqual(sorted(o["id"] for o in self.query("SELECT * FROM c", {"partitionKey": "part-1"})), expected)
        read = CLIENT.ReadItems(self.link, {"partitionKey": "part-1"})
        self.assertEqual(sorted(o["id"] for o in read), expected)

    def test_counts_and_takes_the_top_rows(self):
        count = self.query("SELECT VALUE COUNT(1) FROM c WHERE c.status = 'Done'", CROSS_PARTITION)
        self.assertEqual(count, [sum(1 for o in self.SEEDED if o["status"] == "Done")])
        top = self.query("SELECT TOP 3 * FROM c ORDER BY c.rank", CROSS_PARTITION)
        self.assertEqual([o["rank"] for o in top], sorted(o["rank"] for o in self.SEEDED)[:3])

    def test_pages_within_one_partition_named_by_the_option(self):
        # Every page is a query the emulator scopes to part-0 from the partition key header alone.
        iterable = CLIENT.QueryItems(self.link, "SELECT * FROM c ORDER BY c.rank", {"partitionKey": "part-0", "maxItemCount": 1})
        pages = []
        while True:
            page = iterable.fetch_next_block()
            if not page:
                break
            pages.append(page)
        in_partition = sorted(o["rank"] for o in self.SEEDED if o["orderId"] == "part-0")
        self.assertEqual([len(p) for p in pages], [1] * len(in_partition))
        self.assertEqual([o["rank"] for p in pages for o in p], in_partition)

    def test_pages_by_max_item_count_without_duplicates_or_gaps(self):
        iterable = CLIENT.QueryItems(self.link, "SELECT * FROM c ORDER BY c.rank", dict(CROSS_PARTITION, maxItemCount=5))
        pages = []
        while True:
            page = iterable.fetch_next_block()
            if not page:
                break
            pages.append(page)
        self.assertEqual([len(p) for p in pages], [5, 5, 2])
        ranks = [o["rank"] for p in pages for o in p]
        self.assertEqual(ranks, sorted(o["rank"] for o in self.SEEDED))


if __name__ == "__main__":
    unittest.main(verbosity=2)
