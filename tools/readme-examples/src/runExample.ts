import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';

/** What checking and running one example gave. */
export interface ExampleRun {
  /** TypeScript's errors, formatted; empty when the example type-checks. */
  typeErrors: string[];
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Type-checks `code` as a module of the package in `packageDir` (strict, NodeNext: it imports
 * the packages as a user would, through their exports and types), then runs it there with Node.
 * The files are written inside the package so that its own dependencies resolve, and removed.
 */
export async function runExample(
  packageDir: string,
  code: string,
  timeoutMs: number,
): Promise<ExampleRun> {
  const base = join(packageDir, `.readme-example-${process.pid}`);
  const source = `${base}.mts`;
  const script = `${base}.mjs`;
  try {
    await writeFile(source, code);
    const typeErrors = typeCheck(source);
    const { outputText } = ts.transpileModule(code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    await writeFile(script, outputText);
    return { typeErrors, ...(await runNode(script, packageDir, timeoutMs)) };
  } finally {
    await Promise.all([rm(source, { force: true }), rm(script, { force: true })]);
  }
}

function typeCheck(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: ['node'],
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return text;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `example line ${line + 1}:${character + 1}: ${text}`;
  });
}

function runNode(
  script: string,
  cwd: string,
  timeoutMs: number,
): Promise<Omit<ExampleRun, 'typeErrors'>> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      // Process warnings (the AWS SDK's notice about Node versions) are not the example's output.
      ['--no-warnings', script],
      {
        cwd,
        timeout: timeoutMs,
        // The AWS SDK must never try the EC2 metadata endpoint.
        env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' },
      },
      (error, stdout, stderr) => {
        const exitCode = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ exitCode, stdout, stderr });
      },
    );
  });
}
