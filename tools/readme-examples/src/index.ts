export { expectReadmeExampleRuns, README_EXAMPLE_PACKAGES } from './expectReadmeExample.js';
export { type ReadmeExample, readmeExample, readmeExamples } from './readmeExample.js';
export { type ExampleRun, runExample } from './runExample.js';
