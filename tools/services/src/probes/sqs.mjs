// @ts-check
// SQS readiness: ListQueues in the AWS JSON 1.0 protocol, exactly what @aws-sdk/client-sqs v3
// sends, minus the signature (ElasticMQ checks none). Plain fetch: no SDK needed.

/**
 * @param {string} endpoint e.g. http://127.0.0.1:9324
 * @param {number} [timeoutMs]
 * @returns {Promise<string[]>} the queue URLs
 */
export async function listQueues(endpoint, timeoutMs = 3000) {
  const response = await fetch(new URL('/', endpoint), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': 'AmazonSQS.ListQueues',
    },
    body: '{}',
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`ListQueues answered HTTP ${response.status}: ${text.slice(0, 200)}`);
  }
  /** @type {unknown} */
  const body = JSON.parse(text);
  if (typeof body !== 'object' || body === null) throw new Error('ListQueues: not a JSON object');
  const urls = /** @type {{ QueueUrls?: unknown }} */ (body).QueueUrls ?? [];
  if (!Array.isArray(urls)) throw new Error('ListQueues: QueueUrls is not a list');
  return urls.map(String);
}

/**
 * Throws unless ListQueues works and (when given) lists every expected queue name.
 * @param {string} endpoint
 * @param {readonly string[]} [expectedQueues]
 * @param {number} [timeoutMs]
 */
export async function probeSqs(endpoint, expectedQueues = [], timeoutMs) {
  const urls = await listQueues(endpoint, timeoutMs);
  const names = new Set(urls.map((url) => url.slice(url.lastIndexOf('/') + 1)));
  const missing = expectedQueues.filter((name) => !names.has(name));
  if (missing.length > 0) throw new Error(`queues not created yet: ${missing.join(', ')}`);
}
