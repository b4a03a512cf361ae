using Azure.Messaging.ServiceBus;

namespace ServiceBusConformance;

/// <summary>
/// A topic and its subscriptions, addressed as the .NET client (and so the Functions host's extension) addresses
/// them: CreateSender(topic), CreateReceiver(topic, subscription), CreateProcessor(topic, subscription), and the
/// subscription's dead-letter queue through SubQueue.DeadLetter. The runner declares the topic SERVICEBUS_TOPIC with
/// subscriptions "all" (no rules), "blue" (SQL filter color = 'blue' with the action SET sys.Label = 'blue-order')
/// and "orders" (a correlation filter on Label "order").
/// </summary>
public class TopicTests : ConformanceTest
{
    private static string Topic => Conformance.Topic();

    [Fact]
    public async Task A_send_to_the_topic_reaches_each_subscription_whose_rule_matches()
    {
        await using var sender = Client.CreateSender(Topic);
        await sender.SendMessagesAsync(new[]
        {
            new ServiceBusMessage("blue") { MessageId = "t-1", ApplicationProperties = { ["color"] = "blue", ["quantity"] = 3 } },
            new ServiceBusMessage("order") { MessageId = "t-2", Subject = "order" },
        });

        await using var all = Client.CreateReceiver(Topic, "all", new ServiceBusReceiverOptions { ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete });
        var everything = new List<ServiceBusReceivedMessage>();
        while (everything.Count < 2 && await all.ReceiveMessageAsync(TimeSpan.FromSeconds(5)) is { } message) everything.Add(message);
        Assert.Equal(new[] { "t-1", "t-2" }, everything.Select(m => m.MessageId));

        await using var blue = Client.CreateReceiver(Topic, "blue");
        var tagged = await Conformance.ReceiveOneAsync(blue);
        Assert.Equal("t-1", tagged.MessageId);
        // The rule's action set the subject on this subscription's copy, and named itself in RuleName.
        Assert.Equal("blue-order", tagged.Subject);
        Assert.Equal("paint", tagged.ApplicationProperties["RuleName"]);
        Assert.Equal(3, tagged.ApplicationProperties["quantity"]);
        await blue.CompleteMessageAsync(tagged);
        Assert.Null(await blue.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)));

        await using var orders = Client.CreateReceiver(Topic, "orders");
        var order = await Conformance.ReceiveOneAsync(orders);
        Assert.Equal("t-2", order.MessageId);
        await orders.DeadLetterMessageAsync(order, "Rejected", "not today");
        Assert.Null(await orders.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)));

        await using var deadLetters = Client.CreateReceiver(Topic, "orders", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Conformance.ReceiveOneAsync(deadLetters);
        Assert.Equal("t-2", dead.MessageId);
        Assert.Equal("Rejected", dead.DeadLetterReason);
        await deadLetters.CompleteMessageAsync(dead);
    }

    [Fact]
    public async Task A_processor_on_a_subscription_receives_what_the_Functions_host_would()
    {
        await using var sender = Client.CreateSender(Topic);
        await sender.SendMessageAsync(new ServiceBusMessage("via processor") { MessageId = "t-proc", ApplicationProperties = { ["color"] = "blue" } });
        await using var processor = Client.CreateProcessor(Topic, "blue", new ServiceBusProcessorOptions { AutoCompleteMessages = true });
        var received = new TaskCompletionSource<ServiceBusReceivedMessage>();
        processor.ProcessMessageAsync += args =>
        {
            received.TrySetResult(args.Message);
            return Task.CompletedTask;
        };
        processor.ProcessErrorAsync += args =>
        {
            received.TrySetException(args.Exception);
            return Task.CompletedTask;
        };
        await processor.StartProcessingAsync();
        var message = await Conformance.WithinAsync(received.Task, 10, "the processor's message");
        await processor.StopProcessingAsync();
        Assert.Equal("t-proc", message.MessageId);
        Assert.Equal("blue-order", message.Subject);
        // The rule-less subscription got its copy too; taking it leaves the other test only its own messages.
        await using var all = Client.CreateReceiver(Topic, "all", new ServiceBusReceiverOptions { ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete });
        Assert.Equal("t-proc", (await Conformance.ReceiveOneAsync(all)).MessageId);
    }
}
