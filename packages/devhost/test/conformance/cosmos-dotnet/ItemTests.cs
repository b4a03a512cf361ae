using System.Net;
using Microsoft.Azure.Cosmos;
using Xunit;

namespace CosmosConformance;

/// <summary>Point operations on items: create, read, replace, upsert, delete, patch, and their conditions.</summary>
public class ItemTests : IAsyncLifetime
{
    private Container _orders = null!;

    public async Task InitializeAsync() => _orders = await Emulator.NewContainerAsync("items");

    public Task DisposeAsync() => Task.CompletedTask;

    private static Order NewOrder(string status = "Pending", int rank = 1) =>
        new($"item-{Guid.NewGuid():N}", $"order-{Guid.NewGuid():N}", status, rank);

    [Fact]
    public async Task CreatesAnItemAndReadsItBackWithTheSameETag()
    {
        var order = NewOrder();
        var created = await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        Assert.False(string.IsNullOrEmpty(created.ETag));

        var read = await _orders.ReadItemAsync<Order>(order.Id, new PartitionKey(order.OrderId));
        Assert.Equal(HttpStatusCode.OK, read.StatusCode);
        Assert.Equal(order, read.Resource);
        Assert.Equal(created.ETag, read.ETag);
    }

    [Fact]
    public async Task CreatingAnIdThatExistsInThePartitionIs409()
    {
        var order = NewOrder();
        await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
        var duplicate = await Assert.ThrowsAsync<CosmosException>(
            () => _orders.CreateItemAsync(order with { Status = "Other" }, new PartitionKey(order.OrderId)));
        Assert.Equal(HttpStatusCode.Conflict, duplicate.StatusCode);

        var stored = await _orders.ReadItemAsync<Order>(order.Id, new PartitionKey(order.OrderId));
        Assert.Equal("Pending", stored.Resource.Status);
    }

    [Fact]
    public async Task TheSameIdInAnotherPartitionIsAnotherItem()
    {
        var order = NewOrder();
        var twin = order with { OrderId = $"order-{Guid.NewGuid():N}", Status = "Twin" };
        await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
        var created = await _orders.CreateItemAsync(twin, new PartitionKey(twin.OrderId));
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        Assert.Equal("Pending", (await _orders.ReadItemAsync<Order>(order.Id, new PartitionKey(order.OrderId))).Resource.Status);
        Assert.Equal("Twin", (await _orders.ReadItemAsync<Order>(twin.Id, new PartitionKey(twin.OrderId))).Resource.Status);
    }

    [Fact]
    public async Task ReadingAMissingItemIs404()
    {
        var missing = await Assert.ThrowsAsync<CosmosException>(
            () => _orders.ReadItemAsync<Order>("no-such-item", new PartitionKey("no-such-order")));
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);

        // The stream API reports the status instead of throwing.
        using var stream = await _orders.ReadItemStreamAsync("no-such-item", new PartitionKey("no-such-order"));
        Assert.Equal(HttpStatusCode.NotFound, stream.StatusCode);
    }

    [Fact]
    public async Task ReplacesWithTheCurrentETagAndGetsANewOne()
    {
        var order = NewOrder();
        var created = await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
        var replaced = await _orders.ReplaceItemAsync(order with { Status = "Processing" }, order.Id,
            new PartitionKey(order.OrderId), new ItemRequestOptions { IfMatchEtag = created.ETag });
        Assert.Equal(HttpStatusCode.OK, replaced.StatusCode);
        Assert.NotEqual(created.ETag, replaced.ETag);
        Assert.Equal("Processing", replaced.Resource.Status);

        var read = await _orders.ReadItemAsync<Order>(order.Id, new PartitionKey(order.OrderId));
        Assert.Equal("Processing", read.Resource.Status);
        Assert.Equal(replaced.ETag, read.ETag);
    }

    [Fact]
    public async Task ReplacingWithAStaleETagIs412AndChangesNothing()
    {
        var order = NewOrder();
        var created = await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
        await _orders.ReplaceItemAsync(order with { Status = "First" }, order.Id, new PartitionKey(order.OrderId),
            new ItemRequestOptions { IfMatchEtag = created.ETag });

        var stale = await Assert.ThrowsAsync<CosmosException>(() => _orders.ReplaceItemAsync(
            order with { Status = "Second" }, order.Id, new PartitionKey(order.OrderId),
            new ItemRequestOptions { IfMatchEtag = created.ETag }));
        Assert.Equal(HttpStatusCode.PreconditionFailed, stale.StatusCode);
        Assert.Equal("First", (await _orders.ReadItemAsync<Order>(order.Id, new PartitionKey(order.OrderId))).Resource.Status);
    }

    [Fact]
    public async Task ReplacingAMissingItemIs404()
    {
        var order = NewOrder();
        var missing = await Assert.ThrowsAsync<CosmosException>(
            () => _orders.ReplaceItemAsync(order, order.Id, new PartitionKey(order.OrderId)));
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
    }

    [Fact]
    public async Task UpsertCreatesThenReplaces()
    {
        var order = NewOrder();
        var first = await _orders.UpsertItemAsync(order, new PartitionKey(order.OrderId));
        Assert.Equal(HttpStatusCode.Created, first.StatusCode);
        var second = await _orders.UpsertItemAsync(order with { Rank = 2 }, new PartitionKey(order.OrderId));
        Assert.Equal(HttpStatusCode.OK, second.StatusCode);
        Assert.Equal(2, (await _orders.ReadItemAsync<Order>(order.Id, new PartitionKey(order.OrderId))).Resource.Rank);

        var stale = await Assert.ThrowsAsync<CosmosException>(() => _orders.UpsertItemAsync(order with { Rank = 3 },
            new PartitionKey(order.OrderId), new ItemRequestOptions { IfMatchEtag = first.ETag }));
        Assert.Equal(HttpStatusCode.PreconditionFailed, stale.StatusCode);
    }

    [Fact]
    public async Task DeletesWithTheCurrentETagAfterRefusingAStaleOne()
    {
        var order = NewOrder();
        var created = await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
        var replaced = await _orders.ReplaceItemAsync(order with { Rank = 5 }, order.Id, new PartitionKey(order.OrderId));

        var stale = await Assert.ThrowsAsync<CosmosException>(() => _orders.DeleteItemAsync<Order>(order.Id,
            new PartitionKey(order.OrderId), new ItemRequestOptions { IfMatchEtag = created.ETag }));
        Assert.Equal(HttpStatusCode.PreconditionFailed, stale.StatusCode);

        var deleted = await _orders.DeleteItemAsync<Order>(order.Id, new PartitionKey(order.OrderId),
            new ItemRequestOptions { IfMatchEtag = replaced.ETag });
        Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        var gone = await Assert.ThrowsAsync<CosmosException>(
            () => _orders.ReadItemAsync<Order>(order.Id, new PartitionKey(order.OrderId)));
        Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
    }

    [Fact]
    public async Task PatchSetsAndIncrementsUnderAnIfMatchCondition()
    {
        var order = NewOrder();
        var created = await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
        var patched = await _orders.PatchItemAsync<Order>(order.Id, new PartitionKey(order.OrderId),
            new[] { PatchOperation.Set("/status", "Processing"), PatchOperation.Increment("/attempts", 1) },
            new PatchItemRequestOptions { IfMatchEtag = created.ETag });
        Assert.Equal(HttpStatusCode.OK, patched.StatusCode);
        Assert.Equal(order with { Status = "Processing", Attempts = 1 }, patched.Resource);
        Assert.NotEqual(created.ETag, patched.ETag);

        var again = await _orders.PatchItemAsync<Order>(order.Id, new PartitionKey(order.OrderId),
            new[] { PatchOperation.Increment("/attempts", 2) },
            new PatchItemRequestOptions { IfMatchEtag = patched.ETag });
        Assert.Equal(3, again.Resource.Attempts);
    }

    [Fact]
    public async Task PatchWithAStaleETagIs412AndChangesNothing()
    {
        var order = NewOrder();
        var created = await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
        await _orders.PatchItemAsync<Order>(order.Id, new PartitionKey(order.OrderId),
            new[] { PatchOperation.Set("/status", "Claimed") });

        var stale = await Assert.ThrowsAsync<CosmosException>(() => _orders.PatchItemAsync<Order>(order.Id,
            new PartitionKey(order.OrderId), new[] { PatchOperation.Set("/status", "Stolen") },
            new PatchItemRequestOptions { IfMatchEtag = created.ETag }));
        Assert.Equal(HttpStatusCode.PreconditionFailed, stale.StatusCode);
        Assert.Equal("Claimed", (await _orders.ReadItemAsync<Order>(order.Id, new PartitionKey(order.OrderId))).Resource.Status);
    }
}
