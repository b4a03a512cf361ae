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
                Assert.Equal(value.GetType(), got!.GetType());
                Assert.Equal(value, got);
            }
        }
    }
}
