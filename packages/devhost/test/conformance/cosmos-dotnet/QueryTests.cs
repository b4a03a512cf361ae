using Microsoft.Azure.Cosmos;
using Microsoft.Azure.Cosmos.Linq;
using Xunit;

namespace CosmosConformance;

/// <summary>
/// Queries as the SDK runs them in Gateway mode: a query plan from the gateway first, then the query per
/// partition key range; or, with a PartitionKey request option, straight to that partition.
/// </summary>
public class QueryTests : IAsyncLifetime
{
    // 16 orders over 4 partitions; rank is unique (a total order), status splits them 10 Pending / 6 Done.
    private static readonly Order[] Seeded = Enumerable.Range(0, 16)
        .Select(i => new Order($"q-{i:00}", $"part-{i % 4}", i % 8 < 5 ? "Pending" : "Done", Rank: (i * 5) % 16))
        .ToArray();

    private Container _orders = null!;

    public async Task InitializeAsync()
    {
        _orders = await Emulator.NewContainerAsync("queries");
        foreach (var order in Seeded) await _orders.CreateItemAsync(order, new PartitionKey(order.OrderId));
    }

    public Task DisposeAsync() => Task.CompletedTask;

    private static async Task<List<T>> DrainAsync<T>(FeedIterator<T> iterator)
    {
        var all = new List<T>();
        using (iterator)
        {
            while (iterator.HasMoreResults) all.AddRange(await iterator.ReadNextAsync());
        }
        return all;
    }

    private Task<List<T>> QueryAsync<T>(QueryDefinition query, QueryRequestOptions? options = null) =>
        DrainAsync(_orders.GetItemQueryIterator<T>(query, requestOptions: options));

    private static QueryRequestOptions InPartition(string orderId) => new() { PartitionKey = new PartitionKey(orderId) };

    [Fact]
    public async Task OrdersItemsFromEveryPartitionByOneField()
    {
        var ascending = await QueryAsync<Order>(new QueryDefinition("SELECT * FROM c ORDER BY c.rank"));
        Assert.Equal(Seeded.Select(o => o.Rank).Order(), ascending.Select(o => o.Rank));
        Assert.Equal(4, ascending.Select(o => o.OrderId).Distinct().Count());

        var descending = await QueryAsync<Order>(new QueryDefinition("SELECT * FROM c ORDER BY c.rank DESC"));
        Assert.Equal(Seeded.Select(o => o.Rank).OrderDescending(), descending.Select(o => o.Rank));
    }

    [Fact]
    public async Task PagesByMaxItemCountAndResumesFromAContinuationTokenInANewIterator()
    {
        var query = new QueryDefinition("SELECT * FROM c WHERE c.rank >= @min ORDER BY c.rank").WithParameter("@min", 2);
        var expected = Seeded.Where(o => o.Rank >= 2).OrderBy(o => o.Rank).Select(o => o.Id).ToList();
        var options = new QueryRequestOptions { MaxItemCount = 4 };

        FeedResponse<Order> first;
        using (var iterator = _orders.GetItemQueryIterator<Order>(query, requestOptions: options))
        {
            first = await iterator.ReadNextAsync();
        }
        Assert.Equal(4, first.Count);
        Assert.False(string.IsNullOrEmpty(first.ContinuationToken));

        var pages = new List<FeedResponse<Order>>();
        using (var resumed = _orders.GetItemQueryIterator<Order>(query, first.ContinuationToken, options))
        {
            while (resumed.HasMoreResults) pages.Add(await resumed.ReadNextAsync());
        }
        Assert.All(pages, page => Assert.True(page.Count <= 4));
        Assert.Null(pages[^1].ContinuationToken);
        var ids = first.Concat(pages.SelectMany(p => p)).Select(o => o.Id).ToList();
        Assert.Equal(expected, ids);
    }

    [Fact]
    public async Task FiltersWithAParameterisedWhereAcrossPartitions()
    {
        var query = new QueryDefinition("SELECT * FROM c WHERE c.status = @status AND c.rank < @below")
            .WithParameter("@status", "Done")
            .WithParameter("@below", 12);
        var found = await QueryAsync<Order>(query);
        var expected = Seeded.Where(o => o.Status == "Done" && o.Rank < 12).Select(o => o.Id).Order();
        Assert.Equal(expected, found.Select(o => o.Id).Order());
        Assert.NotEmpty(found);
    }

    [Fact]
    public async Task APartitionKeyRequestOptionScopesTheQueryToThatPartition()
    {
        var all = await QueryAsync<Order>(new QueryDefinition("SELECT * FROM c"), InPartition("part-1"));
        Assert.Equal(Seeded.Where(o => o.OrderId == "part-1").Select(o => o.Id).Order(), all.Select(o => o.Id).Order());

        var query = new QueryDefinition("SELECT * FROM c WHERE c.status = @status ORDER BY c.rank DESC")
            .WithParameter("@status", "Pending");
        var pending = await QueryAsync<Order>(query, InPartition("part-2"));
        var expected = Seeded.Where(o => o.OrderId == "part-2" && o.Status == "Pending")
            .OrderByDescending(o => o.Rank).Select(o => o.Id);
        Assert.Equal(expected, pending.Select(o => o.Id));
    }

    [Fact]
    public async Task PagesWithinOnePartitionAndResumesFromAContinuationToken()
    {
        // The partition is named by the request option only, so every page is a query the gateway scopes to it.
        var query = new QueryDefinition("SELECT * FROM c ORDER BY c.rank");
        var options = new QueryRequestOptions { PartitionKey = new PartitionKey("part-1"), MaxItemCount = 1 };
        var expected = Seeded.Where(o => o.OrderId == "part-1").OrderBy(o => o.Rank).Select(o => o.Id).ToList();

        FeedResponse<Order> first;
        using (var iterator = _orders.GetItemQueryIterator<Order>(query, requestOptions: options))
        {
            first = await iterator.ReadNextAsync();
        }
        Assert.Single(first);
        Assert.False(string.IsNullOrEmpty(first.ContinuationToken));

        var rest = await DrainAsync(_orders.GetItemQueryIterator<Order>(query, first.ContinuationToken, options));
        Assert.Equal(expected, first.Concat(rest).Select(o => o.Id));
    }

    [Fact]
    public async Task ReadsTheFeedOfOnePartitionWithoutAQuery()
    {
        // No query text: the SDK reads the container's feed with the partition key header (GET .../docs).
        var feed = await DrainAsync(_orders.GetItemQueryIterator<Order>((string?)null, requestOptions: InPartition("part-0")));
        Assert.Equal(Seeded.Where(o => o.OrderId == "part-0").Select(o => o.Id).Order(), feed.Select(o => o.Id).Order());
    }

    [Fact]
    public async Task CountsWithSelectValueCountAcrossPartitionsAndInOne()
    {
        var query = new QueryDefinition("SELECT VALUE COUNT(1) FROM c WHERE c.status = @status")
            .WithParameter("@status", "Pending");
        Assert.Equal(new[] { Seeded.Count(o => o.Status == "Pending") }, await QueryAsync<int>(query));
        Assert.Equal(new[] { Seeded.Count(o => o.Status == "Pending" && o.OrderId == "part-3") },
            await QueryAsync<int>(query, InPartition("part-3")));
    }

    [Fact]
    public async Task TakesTheFirstRowsWithTopAcrossPartitionsAndInOne()
    {
        var query = new QueryDefinition("SELECT TOP 3 * FROM c ORDER BY c.rank DESC");
        var top = await QueryAsync<Order>(query);
        Assert.Equal(Seeded.Select(o => o.Rank).OrderDescending().Take(3), top.Select(o => o.Rank));

        var inOne = await QueryAsync<Order>(query, InPartition("part-2"));
        var expected = Seeded.Where(o => o.OrderId == "part-2").Select(o => o.Rank).OrderDescending().Take(3);
        Assert.Equal(expected, inOne.Select(o => o.Rank));
    }

    [Fact]
    public async Task ProjectsSelectedFields()
    {
        var query = new QueryDefinition("SELECT c.id, c.rank FROM c WHERE c.id = @id").WithParameter("@id", "q-03");
        var rows = await QueryAsync<Dictionary<string, object>>(query);
        var row = Assert.Single(rows);
        Assert.Equal(new[] { "id", "rank" }, row.Keys.Order());
        Assert.Equal(Seeded[3].Rank, Convert.ToInt32(row["rank"]));
    }

    [Fact]
    public async Task RunsALinqQuery()
    {
        var iterator = _orders.GetItemLinqQueryable<Order>()
            .Where(o => o.Status == "Done")
            .OrderBy(o => o.Rank)
            .ToFeedIterator();
        var done = await DrainAsync(iterator);
        Assert.Equal(Seeded.Where(o => o.Status == "Done").OrderBy(o => o.Rank).Select(o => o.Id), done.Select(o => o.Id));
    }

    [Fact]
    public async Task AQueryMatchingNothingReturnsNoRows()
    {
        var none = await QueryAsync<Order>(new QueryDefinition("SELECT * FROM c WHERE c.status = 'Nobody'"));
        Assert.Empty(none);
    }
}
