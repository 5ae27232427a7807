import { describe, expect, it } from 'vitest';
import { readmeExample, readmeExamples } from '../src/readmeExample.js';

const fence = '```';

describe('readmeExample', () => {
  it('takes the first ts block of the Example section and the output block right after it', () => {
    const markdown = [
      '# pkg',
      `${fence}ts`,
      'not this one',
      fence,
      '## Example (needs Redis)',
      'Some words.',
      `${fence}bash`,
      'npm install',
      fence,
      `${fence}ts`,
      "console.log('a');",
      "console.log('b');",
      fence,
      '',
      fence,
      'a',
      'b',
      fence,
      '## Options',
    ].join('\n');
    expect(readmeExample(markdown)).toEqual({
      code: "console.log('a');\nconsole.log('b');",
      expectedOutput: ['a', 'b'],
    });
  });

  it('finds every section whose heading starts with "## Example", in order', () => {
    const section = (title: string, line: string) =>
      [`## ${title}`, `${fence}ts`, `console.log('${line}');`, fence, fence, line, fence].join(
        '\n',
      );
    const markdown = [
      section('Example (runs as is)', 'one'),
      section('Options', 'not an example'),
      section('Example: a batch handler', 'two'),
    ].join('\n');
    expect(readmeExamples(markdown)).toEqual([
      { code: "console.log('one');", expectedOutput: ['one'] },
      { code: "console.log('two');", expectedOutput: ['two'] },
    ]);
    expect(readmeExamples('# no examples')).toEqual([]);
  });

  it('has no expected output when prose or another language follows the code', () => {
    const markdown = ['## Example', `${fence}ts`, 'x()', fence, 'Then:', fence, 'out', fence];
    expect(readmeExample(markdown.join('\n'))?.expectedOutput).toBeUndefined();
    const json = ['## Example', `${fence}ts`, 'x()', fence, `${fence}json`, '{}', fence];
    expect(readmeExample(json.join('\n'))?.expectedOutput).toBeUndefined();
  });

  it('is undefined without an Example section, and fails on one without code', () => {
    expect(readmeExample('# pkg\n## Options\n')).toBeUndefined();
    expect(() => readmeExample('## Example\nwords\n## Next\n')).toThrow(/no ```ts block/);
    expect(() => readmeExample(`## Example\n${fence}ts\nx()\n`)).toThrow(/never closed/);
  });
});
