using Azure.Messaging.ServiceBus;

namespace ServiceBusConformance;

/// <summary>
/// A message arrives as it was sent: the broker must pass application-property types through (an int that
/// came back as a uint, or a Guid as bytes, breaks a function that casts it).
/// </summary>
public class PropertyTests : ConformanceTest
{
    private static readonly Guid SomeGuid = Guid.Parse("0f8fad5b-d9cb-469f-a165-70867728950e");
    private static readonly DateTime SomeTime = new(2026, 11, 29, 12, 34, 56, 789, DateTimeKind.Utc);

    [Fact]
    public async Task Application_properties_keep_their_types_through_receive_peek_and_dead_letter()
    {
        var queue = Conformance.Queue("properties");
        await using var sender = Client.CreateSender(queue);
        var sent = new ServiceBusMessage(new BinaryData(new byte[] { 0, 1, 2, 254, 255 }))
        {
            MessageId = "props-1",
            CorrelationId = "corr-1",
            ContentType = "application/octet-stream",
            Subject = "subject",
            To = "to",
            ReplyTo = "reply-to",
            TimeToLive = TimeSpan.FromMinutes(10),
        };
        var properties = new Dictionary<string, object>
        {
            ["int"] = 42,
            ["negativeInt"] = -7,
            ["long"] = 1L << 40,
            ["guid"] = SomeGuid,
            ["datetime"] = SomeTime,
            ["string"] = "text",
            ["binary"] = new byte[] { 9, 8, 7 },
            ["double"] = 3.25,
            ["bool"] = true,
            // The AMQP integer subtypes: a broker that decodes and re-encodes turns these into int or long.
            ["byte"] = (byte)200,
            ["sbyte"] = (sbyte)-100,
            ["short"] = (short)-30_000,
            ["ushort"] = (ushort)60_000,
            ["uint"] = 4_000_000_000u,
            ["ulong"] = 18_000_000_000_000_000_000ul,
            ["float"] = 1.5f,
            ["decimal"] = 12345.6789m,
            ["char"] = 'x',
            // Described types of Microsoft's AMQP library (com.microsoft:datetime-offset, :timespan, :uri).
            ["datetimeoffset"] = new DateTimeOffset(2026, 11, 29, 12, 34, 56, 789, TimeSpan.FromHours(2)),
            ["timespan"] = TimeSpan.FromMinutes(90),
            ["uri"] = new Uri("https://example.invalid/path?q=1"),
        };
        foreach (var (key, value) in properties) sent.ApplicationProperties[key] = value;
        await sender.SendMessageAsync(sent);

        await using var receiver = Client.CreateReceiver(queue);
        AssertSameMessage(Assert.Single(await receiver.PeekMessagesAsync(10)));
        var received = await Conformance.ReceiveOneAsync(receiver);
        AssertSameMessage(received);

        await receiver.DeadLetterMessageAsync(received, "checked", "properties survive dead-lettering");
        await using var deadLetters = Client.CreateReceiver(queue, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Conformance.ReceiveOneAsync(deadLetters);
        AssertSameMessage(dead);
        await deadLetters.CompleteMessageAsync(dead);

        void AssertSameMessage(ServiceBusReceivedMessage message)
        {
            Assert.Equal(new byte[] { 0, 1, 2, 254, 255 }, message.Body.ToArray());
            Assert.Equal("props-1", message.MessageId);
            Assert.Equal("corr-1", message.CorrelationId);
            Assert.Equal("application/octet-stream", message.ContentType);
            Assert.Equal("subject", message.Subject);
            Assert.Equal("to", message.To);
            Assert.Equal("reply-to", message.ReplyTo);
            Assert.Equal(TimeSpan.FromMinutes(10), message.TimeToLive);
            foreach (var (key, value) in properties)
            {
                Assert.True(message.ApplicationProperties.TryGetValue(key, out var got), $"property {key} is missing");
                Assert.True(value.GetType() == got!.GetType(), $"property {key}: sent a {value.GetType()}, got a {got.GetType()}");
                Assert.Equal(value, got);
            }
        }
    }

    [Fact]
    public async Task Properties_modified_on_abandon_defer_and_dead_letter_keep_the_types_they_were_given()
    {
        var queue = Conformance.Queue("modified-properties");
        await using var sender = Client.CreateSender(queue);
        var sent = new ServiceBusMessage("settle me") { MessageId = "mod-1" };
        sent.ApplicationProperties["sent"] = 1;
        await sender.SendMessageAsync(sent);
        await using var receiver = Client.CreateReceiver(queue);
        var expected = new Dictionary<string, object> { ["sent"] = 1 };

        // On the receive link: abandon's and defer's changes travel in a modified outcome.
        var first = await Conformance.ReceiveOneAsync(receiver);
        await Settle(d => receiver.AbandonMessageAsync(first, d),
            new() { ["attempt"] = 2, ["abandonedAt"] = SomeTime, ["small"] = (short)3 });
        var second = await Conformance.ReceiveOneAsync(receiver);
        AssertProperties(second, expected);

        await Settle(d => receiver.DeferMessageAsync(second, d),
            new() { ["deferredBy"] = SomeGuid, ["count"] = 7L, ["unsigned"] = 5u });
        var deferred = await receiver.ReceiveDeferredMessageAsync(second.SequenceNumber);
        AssertProperties(deferred, expected);

        // A message received by sequence number is settled through $management (update-disposition),
        // whose properties-to-modify must keep their types too.
        await Settle(d => receiver.AbandonMessageAsync(deferred, d), new() { ["attempt"] = 3, ["flag"] = (byte)1 });
        deferred = await receiver.ReceiveDeferredMessageAsync(second.SequenceNumber);
        AssertProperties(deferred, expected);

        await Settle(d => receiver.DeadLetterMessageAsync(deferred, d, "Checked", "properties survive every settlement"),
            new() { ["checkedBy"] = "test", ["attempt"] = 4, ["big"] = 1L << 40 });
        await using var deadLetters = Client.CreateReceiver(queue, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Conformance.ReceiveOneAsync(deadLetters);
        Assert.Equal("Checked", dead.DeadLetterReason);
        AssertProperties(dead, expected);
        await deadLetters.CompleteMessageAsync(dead);

        async Task Settle(Func<Dictionary<string, object>, Task> settle, Dictionary<string, object> changes)
        {
            await settle(changes);
            foreach (var (key, value) in changes) expected[key] = value;
        }
    }

    private static void AssertProperties(ServiceBusReceivedMessage message, Dictionary<string, object> expected)
    {
        foreach (var (key, value) in expected)
        {
            Assert.True(message.ApplicationProperties.TryGetValue(key, out var got), $"property {key} is missing");
            Assert.True(value.GetType() == got!.GetType(), $"property {key}: sent a {value.GetType()}, got a {got.GetType()}");
            Assert.Equal(value, got);
        }
    }
}
