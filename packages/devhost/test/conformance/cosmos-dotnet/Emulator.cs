using Microsoft.Azure.Cosmos;
using Newtonsoft.Json;

namespace CosmosConformance;

/// <summary>
/// The emulator under test, as ../cosmos-dotnet.test.ts started it: its endpoint and key, and the database and
/// container its config declared. One client for the whole run, as an application would hold one.
/// </summary>
public static class Emulator
{
    public static string Endpoint => Required("COSMOS_ENDPOINT");
    public static string Key => Required("COSMOS_KEY");
    /// <summary>Created by the emulator from its config (through @azure/cosmos) before the tests start.</summary>
    public static string ConfiguredDatabase => Required("COSMOS_DATABASE");
    public static string ConfiguredContainer => Required("COSMOS_CONTAINER");

    // Only what a user of the official emulator sets: Gateway mode (Direct mode needs the TCP endpoints that
    // only Azure has). No LimitToEndpoint, no SSL switches: the emulator advertises the http endpoint it serves.
    private static readonly Lazy<CosmosClient> Shared = new(() =>
        new CosmosClient($"AccountEndpoint={Endpoint};AccountKey={Key};",
            new CosmosClientOptions { ConnectionMode = ConnectionMode.Gateway }));

    public static CosmosClient Client => Shared.Value;

    public static Database ConfiguredDatabaseHandle => Client.GetDatabase(ConfiguredDatabase);

    /// <summary>A container of its own for one test class, partitioned on /orderId.</summary>
    public static async Task<Container> NewContainerAsync(string prefix)
    {
        var id = $"{prefix}-{Guid.NewGuid():N}";
        var response = await ConfiguredDatabaseHandle.CreateContainerAsync(new ContainerProperties(id, "/orderId"));
        return response.Container;
    }

    private static string Required(string name) =>
        Environment.GetEnvironmentVariable(name) is { Length: > 0 } value
            ? value
            : throw new InvalidOperationException(
                $"{name} is not set: run these tests through packages/devhost/test/conformance/cosmos-dotnet.test.ts");
}

/// <summary>An order as an application would store it: partitioned on orderId.</summary>
public sealed record Order(
    [property: JsonProperty("id")] string Id,
    [property: JsonProperty("orderId")] string OrderId,
    [property: JsonProperty("status")] string Status,
    [property: JsonProperty("rank")] int Rank,
    [property: JsonProperty("attempts")] int Attempts = 0);
