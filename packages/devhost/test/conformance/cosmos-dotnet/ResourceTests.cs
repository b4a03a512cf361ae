using System.Net;
using Microsoft.Azure.Cosmos;
using Newtonsoft.Json.Linq;
using Xunit;

namespace CosmosConformance;

/// <summary>Databases and containers: created, read back with their partition key definition, 404 and 409.</summary>
public class ResourceTests
{
    private static async Task<JObject> RawDefinitionAsync(Container container)
    {
        // ContainerProperties does not expose the partition key kind; the stored definition does.
        using var response = await container.ReadContainerStreamAsync();
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var reader = new StreamReader(response.Content);
        return JObject.Parse(await reader.ReadToEndAsync());
    }

    [Fact]
    public async Task CreatesADatabaseReadsItBackAndRefusesASecondWithTheSameId()
    {
        var id = $"db-{Guid.NewGuid():N}";
        var created = await Emulator.Client.CreateDatabaseAsync(id);
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);

        var read = await created.Database.ReadAsync();
        Assert.Equal(HttpStatusCode.OK, read.StatusCode);
        Assert.Equal(id, read.Resource.Id);

        var again = await Assert.ThrowsAsync<CosmosException>(() => Emulator.Client.CreateDatabaseAsync(id));
        Assert.Equal(HttpStatusCode.Conflict, again.StatusCode);

        var ifNotExists = await Emulator.Client.CreateDatabaseIfNotExistsAsync(id);
        Assert.Equal(HttpStatusCode.OK, ifNotExists.StatusCode);
    }

    [Fact]
    public async Task CreatesAContainerAndReadsBackItsHashPartitionKeyDefinition()
    {
        var id = $"orders-{Guid.NewGuid():N}";
        var created = await Emulator.ConfiguredDatabaseHandle.CreateContainerAsync(
            new ContainerProperties(id, "/orderId"));
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);

        var read = await created.Container.ReadContainerAsync();
        Assert.Equal(id, read.Resource.Id);
        Assert.Equal("/orderId", read.Resource.PartitionKeyPath);

        var definition = await RawDefinitionAsync(created.Container);
        Assert.Equal("Hash", (string?)definition["partitionKey"]?["kind"]);
        Assert.Equal(new[] { "/orderId" }, definition["partitionKey"]?["paths"]?.Values<string>());
    }

    [Fact]
    public async Task ReadsTheContainerDeclaredInTheEmulatorConfigAsHashPartitioned()
    {
        var container = Emulator.Client.GetContainer(Emulator.ConfiguredDatabase, Emulator.ConfiguredContainer);
        var read = await container.ReadContainerAsync();
        Assert.Equal("/orderId", read.Resource.PartitionKeyPath);
        Assert.Equal("Hash", (string?)(await RawDefinitionAsync(container))["partitionKey"]?["kind"]);
    }

    [Fact]
    public async Task ListsTheContainersOfADatabase()
    {
        var mine = await Emulator.NewContainerAsync("listed");
        var ids = new List<string>();
        using var feed = Emulator.ConfiguredDatabaseHandle.GetContainerQueryIterator<ContainerProperties>();
        while (feed.HasMoreResults) ids.AddRange((await feed.ReadNextAsync()).Select(c => c.Id));
        Assert.Contains(mine.Id, ids);
        Assert.Contains(Emulator.ConfiguredContainer, ids);
    }

    [Fact]
    public async Task ReadingAMissingContainerOrDatabaseIs404()
    {
        var container = Emulator.Client.GetContainer(Emulator.ConfiguredDatabase, "no-such-container");
        var missing = await Assert.ThrowsAsync<CosmosException>(() => container.ReadContainerAsync());
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);

        var database = Emulator.Client.GetDatabase("no-such-database");
        var missingDb = await Assert.ThrowsAsync<CosmosException>(() => database.ReadAsync());
        Assert.Equal(HttpStatusCode.NotFound, missingDb.StatusCode);
    }

    [Fact]
    public async Task DeletesAContainer()
    {
        var container = await Emulator.NewContainerAsync("deleted");
        var deleted = await container.DeleteContainerAsync();
        Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        var gone = await Assert.ThrowsAsync<CosmosException>(() => container.ReadContainerAsync());
        Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
    }
}
