using Azure.Messaging.ServiceBus;

namespace ServiceBusConformance;

/// <summary>Abandon, dead-letter, MaxDeliveryCount, defer, and what a lock allows.</summary>
public class SettlementTests : ConformanceTest
{
    [Fact]
    public async Task Abandon_redelivers_the_message_with_a_higher_DeliveryCount_and_modified_properties()
    {
        var queue = Conformance.Queue("abandon");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("again"));
        await using var receiver = Client.CreateReceiver(queue);

        var first = await Conformance.ReceiveOneAsync(receiver);
        Assert.Equal(1, first.DeliveryCount);
        await receiver.AbandonMessageAsync(first, new Dictionary<string, object> { ["attempt"] = "first" });

        var second = await Conformance.ReceiveOneAsync(receiver);
        Assert.Equal(2, second.DeliveryCount);
        Assert.Equal(first.SequenceNumber, second.SequenceNumber);
        Assert.NotEqual(first.LockToken, second.LockToken);
        Assert.Equal("first", second.ApplicationProperties["attempt"]);
        await receiver.CompleteMessageAsync(second);
    }

    [Fact]
    public async Task Dead_letter_with_reason_and_description_read_back_from_the_dead_letter_queue()
    {
        var queue = Conformance.Queue("dead-letter");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("poison") { MessageId = "dl-1", Subject = "Recipe" });
        await using var receiver = Client.CreateReceiver(queue);
        var message = await Conformance.ReceiveOneAsync(receiver);
        await receiver.DeadLetterMessageAsync(message, "Incorrect Recipe type", "Recipe type does not match preferences.");
        Assert.Null(await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)));

        await using var deadLetters = Client.CreateReceiver(queue, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Conformance.ReceiveOneAsync(deadLetters);
        Assert.Equal("poison", dead.Body.ToString());
        Assert.Equal("dl-1", dead.MessageId);
        Assert.Equal("Recipe", dead.Subject);
        Assert.Equal("Incorrect Recipe type", dead.DeadLetterReason);
        Assert.Equal("Recipe type does not match preferences.", dead.DeadLetterErrorDescription);
        // Service Bus sets DeadLetterSource only on messages auto-forwarded out of a dead-letter queue.
        Assert.Null(dead.DeadLetterSource);
        await deadLetters.CompleteMessageAsync(dead);
        Assert.Empty(await deadLetters.PeekMessagesAsync(10));
    }

    [Fact]
    public async Task Reaching_MaxDeliveryCount_moves_the_message_to_the_dead_letter_queue()
    {
        var queue = Conformance.Queue("max-delivery"); // MaxDeliveryCount 2
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("doomed") { MessageId = "md-1" });
        await using var receiver = Client.CreateReceiver(queue);
        for (var attempt = 1; attempt <= 2; attempt++)
        {
            var message = await Conformance.ReceiveOneAsync(receiver);
            Assert.Equal(attempt, message.DeliveryCount);
            await receiver.AbandonMessageAsync(message);
        }
        Assert.Null(await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)));

        await using var deadLetters = Client.CreateReceiver(queue, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Conformance.ReceiveOneAsync(deadLetters);
        Assert.Equal("md-1", dead.MessageId);
        Assert.Equal("MaxDeliveryCountExceeded", dead.DeadLetterReason);
        await deadLetters.CompleteMessageAsync(dead);
    }

    [Fact]
    public async Task A_deferred_message_is_received_by_sequence_number_with_a_lock_and_completed()
    {
        var queue = Conformance.Queue("deferral");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("later") { MessageId = "def-1" });
        await using var receiver = Client.CreateReceiver(queue);
        var message = await Conformance.ReceiveOneAsync(receiver);
        await receiver.DeferMessageAsync(message);
        Assert.Null(await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)));

        var peeked = Assert.Single(await receiver.PeekMessagesAsync(10));
        Assert.Equal(ServiceBusMessageState.Deferred, peeked.State);

        var deferred = await receiver.ReceiveDeferredMessageAsync(message.SequenceNumber);
        Assert.Equal("def-1", deferred.MessageId);
        Assert.Equal(ServiceBusMessageState.Deferred, deferred.State);
        Assert.True(Guid.TryParse(deferred.LockToken, out var lockToken) && lockToken != Guid.Empty,
            $"a deferred message received in PeekLock carries a lock token (got '{deferred.LockToken}')");
        Assert.True(deferred.LockedUntil > DateTimeOffset.UtcNow);
        await receiver.RenewMessageLockAsync(deferred);
        await receiver.CompleteMessageAsync(deferred);

        var gone = await Assert.ThrowsAsync<ServiceBusException>(() => receiver.ReceiveDeferredMessageAsync(message.SequenceNumber));
        Assert.Equal(ServiceBusFailureReason.MessageNotFound, gone.Reason);
    }

    [Fact]
    public async Task RenewMessageLock_extends_the_lock_past_its_duration()
    {
        // LockDuration PT4S: each wait leaves 1.5 s to spare, since the test classes run in parallel with each other
        // (and CI runs the Python suite beside them); a 2 s lock renewed at 1.2 s was once lost under that load.
        var queue = Conformance.Queue("locks");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("held"));
        await using var receiver = Client.CreateReceiver(queue);

        var message = await Conformance.ReceiveOneAsync(receiver);
        var firstLock = message.LockedUntil;
        await Task.Delay(2_500);
        await receiver.RenewMessageLockAsync(message);
        Assert.True(message.LockedUntil > firstLock.AddSeconds(2), $"{firstLock:O} -> {message.LockedUntil:O}");
        await Task.Delay(2_500); // past the first lock, within the renewed one
        await receiver.CompleteMessageAsync(message);
        Assert.Null(await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(500)));
    }

    [Fact]
    public async Task Settling_after_the_lock_lapsed_fails_with_MessageLockLost_and_the_message_comes_back()
    {
        var queue = Conformance.Queue("lock-lost"); // LockDuration PT1S
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("slow"));
        await using var receiver = Client.CreateReceiver(queue);

        var message = await Conformance.ReceiveOneAsync(receiver);
        await Task.Delay(1_500);
        var error = await Assert.ThrowsAsync<ServiceBusException>(() => receiver.CompleteMessageAsync(message));
        Assert.Equal(ServiceBusFailureReason.MessageLockLost, error.Reason);
        var again = await Conformance.ReceiveOneAsync(receiver);
        Assert.Equal(2, again.DeliveryCount);
        await receiver.CompleteMessageAsync(again);
    }
}
