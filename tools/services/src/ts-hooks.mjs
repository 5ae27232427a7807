// @ts-check
// Module hooks for register-ts.mjs: `.ts` files are transpiled on load.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * `./x.js` imported from a `.ts` file means `./x.ts` (NodeNext import style).
 * @param {string} specifier
 * @param {{ parentURL?: string }} context
 * @param {(specifier: string, context: object) => Promise<object>} next
 */
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
      return next(`${specifier.slice(0, -3)}.ts`, context);
    }
    throw error;
  }
}

/**
 * @param {string} url
 * @param {object} context
 * @param {(url: string, context: object) => Promise<object>} next
 */
export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const fileName = fileURLToPath(url);
  const { outputText } = ts.transpileModule(await readFile(fileName, 'utf8'), {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
