using System.Text.RegularExpressions;
using Azure.Messaging.ServiceBus;

namespace ServiceBusConformance;

/// <summary>Refusals arrive as the exceptions Azure gives, at once, not as timeouts.</summary>
public class RefusalTests : ConformanceTest
{
    [Fact]
    public async Task A_wrong_SAS_key_is_refused_with_UnauthorizedAccessException()
    {
        var wrongKey = Regex.Replace(Conformance.ConnectionString, "SharedAccessKey=[^;]*", "SharedAccessKey=not-the-key");
        await using var client = Conformance.CreateClient(wrongKey);
        await using var sender = client.CreateSender(Conformance.Queue("refusals"));
        var started = DateTime.UtcNow;
        await Assert.ThrowsAsync<UnauthorizedAccessException>(() => sender.SendMessageAsync(new ServiceBusMessage("x")));
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(10), "the refusal came at once");
    }

    [Fact]
    public async Task An_unknown_queue_is_refused_with_MessagingEntityNotFound()
    {
        await using var sender = Client.CreateSender("no-such-queue");
        var sendError = await Assert.ThrowsAsync<ServiceBusException>(() => sender.SendMessageAsync(new ServiceBusMessage("x")));
        Assert.Equal(ServiceBusFailureReason.MessagingEntityNotFound, sendError.Reason);

        await using var receiver = Client.CreateReceiver("no-such-queue");
        var receiveError = await Assert.ThrowsAsync<ServiceBusException>(() => receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(2)));
        Assert.Equal(ServiceBusFailureReason.MessagingEntityNotFound, receiveError.Reason);
    }

    [Fact]
    public async Task Sending_to_a_dead_letter_queue_is_refused()
    {
        await using var sender = Client.CreateSender($"{Conformance.Queue("refusals")}/$DeadLetterQueue");
        // amqp:not-allowed, which the client raises as InvalidOperationException.
        await Assert.ThrowsAsync<InvalidOperationException>(() => sender.SendMessageAsync(new ServiceBusMessage("x")));
    }
}
