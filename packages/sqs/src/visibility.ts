import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { isReceiptGone } from './errors.js';

/** Most entries SQS takes in one batch call. */
const MAX_BATCH = 10;

/**
 * Sets one message's visibility timeout, counted from now. `gone` when SQS says the receipt
 * handle no longer designates an in-flight message of ours; other failures throw.
 */
export async function changeVisibility(
  client: SQSClient,
  queueUrl: string,
  receiptHandle: string,
  seconds: number,
): Promise<'changed' | 'gone'> {
  try {
    await client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: seconds,
      }),
    );
    return 'changed';
  } catch (error) {
    if (isReceiptGone(error)) return 'gone';
    throw error;
  }
}

/**
 * Makes messages visible again at once (give-back), 10 per call. Best effort: returns how many
 * could not be given back; those reappear when their visibility lapses, as after a crash.
 */
export async function giveBack(
  client: SQSClient,
  queueUrl: string,
  receiptHandles: readonly string[],
): Promise<number> {
  let failed = 0;
  const calls: Promise<void>[] = [];
  for (let start = 0; start < receiptHandles.length; start += MAX_BATCH) {
    const chunk = receiptHandles.slice(start, start + MAX_BATCH);
    calls.push(
      client
        .send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((handle, i) => ({
              Id: String(i),
              ReceiptHandle: handle,
              VisibilityTimeout: 0,
            })),
          }),
        )
        .then(
          (answer) => {
            failed += (answer.Failed ?? []).filter((f) => !isReceiptGone(f.Code)).length;
          },
          () => {
            failed += chunk.length;
          },
        ),
    );
  }
  await Promise.all(calls);
  return failed;
}
