using System.Collections.Concurrent;
using Azure.Messaging.ServiceBus;

namespace ServiceBusConformance;

/// <summary>
/// The Functions host's Service Bus trigger is a ServiceBusProcessor: concurrent calls, messages completed
/// when the function returns, abandoned when it throws, and locks renewed while it runs.
/// </summary>
public class ProcessorTests : ConformanceTest
{
    [Fact]
    public async Task Processor_with_MaxConcurrentCalls_and_AutoComplete_handles_every_message_once()
    {
        var queue = Conformance.Queue("processor");
        const int count = 24;
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessagesAsync(Enumerable.Range(0, count).Select(i => new ServiceBusMessage($"m{i}") { MessageId = $"m{i}" }));

        var seen = new ConcurrentDictionary<string, int>();
        var inFlight = 0;
        var mostInFlight = 0;
        var allSeen = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var errors = new ConcurrentQueue<Exception>();
        await using var processor = Client.CreateProcessor(queue, new ServiceBusProcessorOptions
        {
            MaxConcurrentCalls = 4,
            AutoCompleteMessages = true,
        });
        processor.ProcessMessageAsync += async args =>
        {
            var now = Interlocked.Increment(ref inFlight);
            InterlockedMax(ref mostInFlight, now);
            await Task.Delay(150);
            Interlocked.Decrement(ref inFlight);
            if (seen.AddOrUpdate(args.Message.MessageId, 1, (_, n) => n + 1) == 1 && seen.Count == count) allSeen.TrySetResult(true);
        };
        processor.ProcessErrorAsync += args =>
        {
            errors.Enqueue(args.Exception);
            return Task.CompletedTask;
        };

        await processor.StartProcessingAsync();
        await Conformance.WithinAsync(allSeen.Task, 20, $"{count} messages");
        await processor.StopProcessingAsync();

        Assert.Empty(errors);
        Assert.All(seen.Values, n => Assert.Equal(1, n));
        Assert.InRange(mostInFlight, 2, 4);
        // Auto-complete settled every message: nothing is left to peek.
        await using var receiver = Client.CreateReceiver(queue);
        Assert.Empty(await receiver.PeekMessagesAsync(count));
    }

    [Fact]
    public async Task A_handler_exception_abandons_the_message_and_it_is_redelivered()
    {
        var queue = Conformance.Queue("processor-errors");
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("flaky") { MessageId = "flaky-1" });

        var deliveryCounts = new ConcurrentQueue<int>();
        var errors = new ConcurrentQueue<Exception>();
        var handled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var processor = Client.CreateProcessor(queue, new ServiceBusProcessorOptions
        {
            MaxConcurrentCalls = 1,
            AutoCompleteMessages = true,
        });
        processor.ProcessMessageAsync += args =>
        {
            deliveryCounts.Enqueue(args.Message.DeliveryCount);
            if (args.Message.DeliveryCount < 3) throw new InvalidOperationException($"attempt {args.Message.DeliveryCount} fails");
            handled.TrySetResult(true);
            return Task.CompletedTask;
        };
        processor.ProcessErrorAsync += args =>
        {
            errors.Enqueue(args.Exception);
            return Task.CompletedTask;
        };

        await processor.StartProcessingAsync();
        await Conformance.WithinAsync(handled.Task, 15, "the third attempt");
        await processor.StopProcessingAsync();

        Assert.Equal(new[] { 1, 2, 3 }, deliveryCounts.ToArray());
        Assert.Equal(2, errors.Count(e => e is InvalidOperationException));
        await using var receiver = Client.CreateReceiver(queue);
        Assert.Empty(await receiver.PeekMessagesAsync(10));
    }

    [Fact]
    public async Task A_handler_that_outlives_the_lock_keeps_it_by_automatic_renewal()
    {
        var queue = Conformance.Queue("renewal"); // LockDuration PT2S
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("slow") { MessageId = "slow-1" });

        var deliveries = new ConcurrentQueue<(int DeliveryCount, DateTimeOffset LockedUntilAtStart, DateTimeOffset LockedUntilAtEnd)>();
        var errors = new ConcurrentQueue<Exception>();
        var handled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var processor = Client.CreateProcessor(queue, new ServiceBusProcessorOptions
        {
            MaxConcurrentCalls = 1,
            AutoCompleteMessages = true,
            MaxAutoLockRenewalDuration = TimeSpan.FromMinutes(1),
        });
        processor.ProcessMessageAsync += async args =>
        {
            var lockedUntil = args.Message.LockedUntil;
            await Task.Delay(TimeSpan.FromSeconds(5)); // 2.5 lock durations
            deliveries.Enqueue((args.Message.DeliveryCount, lockedUntil, args.Message.LockedUntil));
            handled.TrySetResult(true);
        };
        processor.ProcessErrorAsync += args =>
        {
            errors.Enqueue(args.Exception);
            return Task.CompletedTask;
        };

        await processor.StartProcessingAsync();
        await Conformance.WithinAsync(handled.Task, 15, "the slow handler");
        await Task.Delay(500); // let auto-complete reach the emulator
        await processor.StopProcessingAsync();

        Assert.Empty(errors); // a lost lock would fail auto-complete with MessageLockLost
        var delivery = Assert.Single(deliveries); // and a lapsed lock would have redelivered it
        Assert.Equal(1, delivery.DeliveryCount);
        Assert.True(delivery.LockedUntilAtEnd > delivery.LockedUntilAtStart.AddSeconds(2),
            $"the lock was renewed: {delivery.LockedUntilAtStart:O} -> {delivery.LockedUntilAtEnd:O}");
        await using var receiver = Client.CreateReceiver(queue);
        Assert.Empty(await receiver.PeekMessagesAsync(10));
    }

    [Fact]
    public async Task A_message_whose_handler_always_throws_reaches_the_dead_letter_queue_at_MaxDeliveryCount()
    {
        var queue = Conformance.Queue("processor-poison"); // MaxDeliveryCount 3
        await using var sender = Client.CreateSender(queue);
        await sender.SendMessageAsync(new ServiceBusMessage("poison") { MessageId = "poison-1" });

        var attempts = new ConcurrentQueue<int>();
        await using var processor = Client.CreateProcessor(queue, new ServiceBusProcessorOptions
        {
            MaxConcurrentCalls = 1,
            AutoCompleteMessages = true,
        });
        processor.ProcessMessageAsync += args =>
        {
            attempts.Enqueue(args.Message.DeliveryCount);
            throw new InvalidOperationException("never succeeds");
        };
        processor.ProcessErrorAsync += _ => Task.CompletedTask;

        await using var deadLetters = Client.CreateReceiver(queue, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        await processor.StartProcessingAsync();
        var dead = await Conformance.ReceiveOneAsync(deadLetters, 15);
        await processor.StopProcessingAsync();

        Assert.Equal("poison-1", dead.MessageId);
        Assert.Equal("MaxDeliveryCountExceeded", dead.DeadLetterReason);
        Assert.Equal(new[] { 1, 2, 3 }, attempts.ToArray());
        await deadLetters.CompleteMessageAsync(dead);
    }

    [Fact]
    public async Task A_processor_on_an_unknown_queue_reports_MessagingEntityNotFound_to_its_error_handler()
    {
        var reported = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var processor = Client.CreateProcessor("no-such-queue", new ServiceBusProcessorOptions { MaxConcurrentCalls = 1 });
        processor.ProcessMessageAsync += _ => Task.CompletedTask;
        processor.ProcessErrorAsync += args =>
        {
            reported.TrySetResult(args.Exception);
            return Task.CompletedTask;
        };

        await processor.StartProcessingAsync();
        var error = await Conformance.WithinAsync(reported.Task, 10, "the processor's error handler");
        await processor.StopProcessingAsync();

        var serviceBusError = Assert.IsType<ServiceBusException>(error);
        Assert.Equal(ServiceBusFailureReason.MessagingEntityNotFound, serviceBusError.Reason);
    }

    private static void InterlockedMax(ref int target, int value)
    {
        for (var current = target; value > current; current = target)
        {
            if (Interlocked.CompareExchange(ref target, value, current) == current) return;
        }
    }
}
