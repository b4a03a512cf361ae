using Azure.Messaging.ServiceBus;

namespace ServiceBusConformance;

/// <summary>
/// What the runner (../servicebus-dotnet.test.ts) hands over: the emulator's connection string and, per test
/// class, a queue of its own with the settings that class needs (so that classes can run in parallel).
/// </summary>
public static class Conformance
{
    public static string ConnectionString => Required("SERVICEBUS_CONNECTION_STRING");

    /// <summary>The queue for a role, e.g. "max-delivery" is read from SERVICEBUS_QUEUE_MAX_DELIVERY.</summary>
    public static string Queue(string role) =>
        Required("SERVICEBUS_QUEUE_" + role.ToUpperInvariant().Replace('-', '_'));

    /// <summary>
    /// Fails fast instead of retrying for a minute: against a loopback emulator a slow answer is a bug, and
    /// the suite must report it within its time budget.
    /// </summary>
    public static ServiceBusClient CreateClient(string? connectionString = null) =>
        new(connectionString ?? ConnectionString, new ServiceBusClientOptions
        {
            RetryOptions = new ServiceBusRetryOptions
            {
                MaxRetries = 1,
                Delay = TimeSpan.FromMilliseconds(200),
                TryTimeout = TimeSpan.FromSeconds(15),
            },
        });

    /// <summary>Receives exactly one message, failing the test when none arrives in time.</summary>
    public static async Task<ServiceBusReceivedMessage> ReceiveOneAsync(ServiceBusReceiver receiver, double seconds = 5)
    {
        var message = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(seconds));
        Assert.NotNull(message);
        return message;
    }

    /// <summary>Waits until <paramref name="done"/> completes, failing the test after the timeout.</summary>
    public static async Task<T> WithinAsync<T>(Task<T> done, double seconds, string what)
    {
        var finished = await Task.WhenAny(done, Task.Delay(TimeSpan.FromSeconds(seconds)));
        if (finished != done) Assert.Fail($"timed out after {seconds} s waiting for {what}");
        return await done;
    }

    /// <summary>The topic of TopicTests, read from SERVICEBUS_TOPIC (its subscriptions are described there).</summary>
    public static string Topic() => Required("SERVICEBUS_TOPIC");

    private static string Required(string name) =>
        Environment.GetEnvironmentVariable(name) is { Length: > 0 } value
            ? value
            : throw new InvalidOperationException(
                $"{name} is not set: run these tests through packages/devhost/test/conformance/servicebus-dotnet.test.ts, which starts the emulator and sets it.");
}

/// <summary>One client per test class, closed after its tests.</summary>
public abstract class ConformanceTest : IAsyncLifetime
{
    protected ServiceBusClient Client { get; } = Conformance.CreateClient();

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync() => await Client.DisposeAsync();
}
