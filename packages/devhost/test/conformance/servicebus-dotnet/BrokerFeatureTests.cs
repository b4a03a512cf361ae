using Azure.Messaging.ServiceBus;

namespace ServiceBusConformance;

/// <summary>What the broker does on its own: scheduling, expiry, duplicate detection, and browsing.</summary>
public class BrokerFeatureTests : ConformanceTest
{
    [Fact]
    public async Task Schedules_a_message_cancels_another_and_delivers_the_first_at_its_time()
    {
        var queue = Conformance.Queue("scheduling");
        await using var sender = Client.CreateSender(queue);
        var at = DateTimeOffset.UtcNow.AddSeconds(2);
        var kept = await sender.ScheduleMessageAsync(new ServiceBusMessage("kept") { MessageId = "s-kept" }, at);
        var cancelled = await sender.ScheduleMessageAsync(new ServiceBusMessage("cancelled") { MessageId = "s-cancelled" }, at);
        Assert.True(kept > 0 && cancelled > kept, $"sequence numbers {kept}, {cancelled}");

        await using var receiver = Client.CreateReceiver(queue);
        var peeked = await receiver.PeekMessagesAsync(10);
        Assert.Equal(new[] { kept, cancelled }, peeked.Select(m => m.SequenceNumber));
        Assert.All(peeked, m => Assert.Equal(ServiceBusMessageState.Scheduled, m.State));
        Assert.Equal(at.ToUnixTimeMilliseconds(), peeked[0].ScheduledEnqueueTime.ToUnixTimeMilliseconds());

        await sender.CancelScheduledMessageAsync(cancelled);
        Assert.Null(await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500))); // not yet due
        var message = await Conformance.ReceiveOneAsync(receiver, 5);
        Assert.Equal("s-kept", message.MessageId);
        Assert.True(message.EnqueuedTime >= at.AddMilliseconds(-1), $"enqueued {message.EnqueuedTime:O}, scheduled {at:O}");
        await receiver.CompleteMessageAsync(message);
        Assert.Null(await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(1_000)));
    }

    [Fact]
    public async Task A_message_sent_with_ScheduledEnqueueTime_waits_for_it()
    {
        var queue = Conformance.Queue("scheduled-send");
        await using var sender = Client.CreateSender(queue);
        var at = DateTimeOffset.UtcNow.AddSeconds(1.5);
        await sender.SendMessageAsync(new ServiceBusMessage("timed") { ScheduledEnqueueTime = at });
        await using var receiver = Client.CreateReceiver(queue);
        Assert.Equal(ServiceBusMessageState.Scheduled, Assert.Single(await receiver.PeekMessagesAsync(10)).State);
        var message = await Conformance.ReceiveOneAsync(receiver, 5);
        Assert.True(DateTimeOffset.UtcNow >= at.AddMilliseconds(-1));
        await receiver.CompleteMessageAsync(message);
    }

    [Fact]
    public async Task An_expired_message_goes_to_the_dead_letter_queue_with_TTLExpiredException()
    {
        var queue = Conformance.Queue("expiry"); // DeadLetteringOnMessageExpiration
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("stale") { MessageId = "ttl-1", TimeToLive = TimeSpan.FromSeconds(1) });
        await sender.SendMessageAsync(new ServiceBusMessage("fresh") { MessageId = "ttl-2", TimeToLive = TimeSpan.FromMinutes(5) });
        await Task.Delay(1_500);

        await using var receiver = Client.CreateReceiver(queue);
        var fresh = await Conformance.ReceiveOneAsync(receiver);
        Assert.Equal("ttl-2", fresh.MessageId);
        Assert.Equal(TimeSpan.FromMinutes(5), fresh.TimeToLive);
        // The .NET client reads ExpiresAt from the absolute-expiry-time it stamped itself (sent + TTL).
        Assert.InRange(fresh.ExpiresAt, fresh.EnqueuedTime.AddMinutes(5).AddSeconds(-1), fresh.EnqueuedTime.AddMinutes(5).AddSeconds(1));
        await receiver.CompleteMessageAsync(fresh);

        await using var deadLetters = Client.CreateReceiver(queue, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Conformance.ReceiveOneAsync(deadLetters);
        Assert.Equal("ttl-1", dead.MessageId);
        Assert.Equal("TTLExpiredException", dead.DeadLetterReason);
        await deadLetters.CompleteMessageAsync(dead);
    }

    [Fact]
    public async Task Duplicate_detection_drops_a_resent_MessageId()
    {
        var queue = Conformance.Queue("duplicates"); // RequiresDuplicateDetection
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("first") { MessageId = "dup-1" });
        await sender.SendMessageAsync(new ServiceBusMessage("again") { MessageId = "dup-1" });
        await sender.SendMessageAsync(new ServiceBusMessage("other") { MessageId = "dup-2" });

        await using var receiver = Client.CreateReceiver(queue, new ServiceBusReceiverOptions
        {
            ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete,
        });
        var bodies = new List<string>();
        for (var message = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(2));
             message is not null;
             message = await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)))
        {
            bodies.Add(message.Body.ToString());
        }
        Assert.Equal(new[] { "first", "other" }, bodies);
    }

    /// <summary>
    /// Three sends of one MessageId leave one message, however the client puts them on the wire: one transfer
    /// each, or one batched transfer (format 0x80013700, a data section per message) for the list and the
    /// batch, where the duplicates arrive together.
    /// </summary>
    [Theory]
    [InlineData("one-by-one")]
    [InlineData("list")]
    [InlineData("batch")]
    public async Task Duplicate_detection_keeps_one_of_three_sends_of_a_MessageId(string how)
    {
        var queue = Conformance.Queue("duplicates-" + how); // RequiresDuplicateDetection
        var id = $"dup3-{how}";
        var messages = new[] { "one", "two", "three" }.Select(body => new ServiceBusMessage(body) { MessageId = id }).ToList();
        await using var sender = Client.CreateSender(queue);
        switch (how)
        {
            case "one-by-one":
                foreach (var message in messages) await sender.SendMessageAsync(message);
                break;
            case "list":
                await sender.SendMessagesAsync(messages);
                break;
            default:
                using (var batch = await sender.CreateMessageBatchAsync())
                {
                    foreach (var message in messages) Assert.True(batch.TryAddMessage(message), "the batch took the message");
                    await sender.SendMessagesAsync(batch);
                }
                break;
        }

        await using var receiver = Client.CreateReceiver(queue, new ServiceBusReceiverOptions
        {
            ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete,
        });
        var received = new List<ServiceBusReceivedMessage>();
        for (var message = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(2));
             message is not null;
             message = await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)))
        {
            received.Add(message);
        }
        var kept = Assert.Single(received);
        Assert.Equal((id, "one"), (kept.MessageId, kept.Body.ToString()));
    }

    [Fact]
    public async Task Peek_browses_in_order_from_a_sequence_number_without_locking()
    {
        var queue = Conformance.Queue("peek");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessagesAsync(new[] { "p1", "p2", "p3" }.Select(body => new ServiceBusMessage(body)));
        await using var receiver = Client.CreateReceiver(queue);

        var all = await receiver.PeekMessagesAsync(10);
        Assert.Equal(new[] { "p1", "p2", "p3" }, all.Select(m => m.Body.ToString()));
        Assert.All(all, m => Assert.Equal(ServiceBusMessageState.Active, m.State));
        var fromSecond = await receiver.PeekMessagesAsync(10, all[1].SequenceNumber);
        Assert.Equal(new[] { "p2", "p3" }, fromSecond.Select(m => m.Body.ToString()));

        var first = await Conformance.ReceiveOneAsync(receiver);
        Assert.Equal("p1", first.Body.ToString());
        Assert.Equal(1, first.DeliveryCount); // peeking did not count as a delivery
        await receiver.CompleteMessageAsync(first);
        Assert.Equal(new[] { "p2", "p3" }, (await receiver.PeekMessagesAsync(10, 0)).Select(m => m.Body.ToString()));
    }
}
