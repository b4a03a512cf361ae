using Azure.Messaging.ServiceBus;

namespace ServiceBusConformance;

/// <summary>Sending one message and batches, the tier's size limit, and both receive modes.</summary>
public class SendReceiveTests : ConformanceTest
{
    private const int StandardTierMaxMessageSize = 256 * 1024;

    [Fact]
    public async Task Sends_one_message_and_receives_it_peek_locked_then_completes_it()
    {
        var queue = Conformance.Queue("send-receive");
        await using var sender = Client.CreateSender(queue);
        await using var receiver = Client.CreateReceiver(queue);
        var sentAt = DateTimeOffset.UtcNow;
        await sender.SendMessageAsync(new ServiceBusMessage("""{"orderId":"ORD-1"}""")
        {
            MessageId = "ORD-1",
            ContentType = "application/json",
        });

        var message = await Conformance.ReceiveOneAsync(receiver);
        Assert.Equal("""{"orderId":"ORD-1"}""", message.Body.ToString());
        Assert.Equal("ORD-1", message.MessageId);
        Assert.Equal("application/json", message.ContentType);
        Assert.Equal(1, message.DeliveryCount); // .NET counts the first delivery as 1
        Assert.NotEqual(Guid.Empty.ToString(), message.LockToken);
        Assert.True(message.SequenceNumber > 0);
        Assert.Equal(ServiceBusMessageState.Active, message.State);
        Assert.InRange(message.EnqueuedTime, sentAt.AddSeconds(-2), DateTimeOffset.UtcNow.AddSeconds(2));
        // LockDuration PT30S, from the delivery.
        Assert.InRange(message.LockedUntil, sentAt.AddSeconds(28), DateTimeOffset.UtcNow.AddSeconds(32));

        await receiver.CompleteMessageAsync(message);
        Assert.Null(await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)));
    }

    [Fact]
    public async Task Sends_a_list_and_a_batch_filled_up_to_the_size_limit_delivered_in_order()
    {
        var queue = Conformance.Queue("batches");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessagesAsync(new[] { "a", "b", "c" }.Select(body => new ServiceBusMessage(body)));

        using var batch = await sender.CreateMessageBatchAsync();
        Assert.Equal(StandardTierMaxMessageSize, batch.MaxSizeInBytes); // the emulator's max-message-size
        var filler = new string('x', 8 * 1024);
        var added = 0;
        while (batch.TryAddMessage(new ServiceBusMessage($"{added:D4}{filler}"))) added++;
        Assert.InRange(added, 20, 40); // 8 KiB each fills 256 KiB with about 31
        await sender.SendMessagesAsync(batch);

        await using var receiver = Client.CreateReceiver(queue, new ServiceBusReceiverOptions
        {
            ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete,
        });
        var bodies = new List<string>();
        while (bodies.Count < 3 + added)
        {
            var received = await receiver.ReceiveMessagesAsync(100, TimeSpan.FromSeconds(5));
            Assert.NotEmpty(received);
            bodies.AddRange(received.Select(m => m.Body.ToString()));
        }
        Assert.Equal(new[] { "a", "b", "c" }, bodies.Take(3));
        Assert.Equal(Enumerable.Range(0, added).Select(i => $"{i:D4}"), bodies.Skip(3).Select(b => b[..4]));
    }

    [Fact]
    public async Task A_message_over_the_tier_limit_is_refused_with_MessageSizeExceeded()
    {
        var queue = Conformance.Queue("batches");
        await using var sender = Client.CreateSender(queue);
        var tooBig = new ServiceBusMessage(new byte[StandardTierMaxMessageSize + 1024]);
        var error = await Assert.ThrowsAsync<ServiceBusException>(() => sender.SendMessageAsync(tooBig));
        Assert.Equal(ServiceBusFailureReason.MessageSizeExceeded, error.Reason);
        using var batch = await sender.CreateMessageBatchAsync();
        Assert.False(batch.TryAddMessage(tooBig));
    }

    [Fact]
    public async Task A_message_just_under_the_tier_limit_is_sent_and_received_whole()
    {
        var queue = Conformance.Queue("large");
        await using var sender = Client.CreateSender(queue);
        var body = new byte[StandardTierMaxMessageSize - 4 * 1024]; // headroom for the sections around it
        new Random(7).NextBytes(body);
        await sender.SendMessageAsync(new ServiceBusMessage(body) { MessageId = "large-1" });

        await using var receiver = Client.CreateReceiver(queue, new ServiceBusReceiverOptions
        {
            ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete,
        });
        var message = await Conformance.ReceiveOneAsync(receiver);
        Assert.Equal("large-1", message.MessageId);
        Assert.Equal(body, message.Body.ToArray());
    }

    [Fact]
    public async Task ReceiveAndDelete_removes_the_message_on_delivery()
    {
        var queue = Conformance.Queue("receive-and-delete");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("once"));
        await using var receiver = Client.CreateReceiver(queue, new ServiceBusReceiverOptions
        {
            ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete,
        });

        var message = await Conformance.ReceiveOneAsync(receiver);
        Assert.Equal("once", message.Body.ToString());
        Assert.Null(await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)));
        Assert.Empty(await receiver.PeekMessagesAsync(10));
    }

    [Fact]
    public async Task A_receiver_with_prefetch_gets_every_message()
    {
        var queue = Conformance.Queue("prefetch");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessagesAsync(Enumerable.Range(0, 10).Select(i => new ServiceBusMessage($"p{i}")));
        await using var receiver = Client.CreateReceiver(queue, new ServiceBusReceiverOptions { PrefetchCount = 5 });

        var bodies = new List<string>();
        while (bodies.Count < 10)
        {
            var received = await receiver.ReceiveMessagesAsync(3, TimeSpan.FromSeconds(5));
            Assert.NotEmpty(received);
            foreach (var message in received)
            {
                bodies.Add(message.Body.ToString());
                await receiver.CompleteMessageAsync(message);
            }
        }
        Assert.Equal(Enumerable.Range(0, 10).Select(i => $"p{i}"), bodies);
    }
}
