import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.mocha } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    // Page modules of methods and the hosted pages' scripts run in the browser.
    files: [
      '**/page.js',
      '**/*-page.js',
      '**/client/**/*.js',
      'core/plugin-api/assets/**/*.js',
      'plugins/page-login/assets/**/*.js',
      'plugins/page-account/assets/**/*.js',
    ],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Tests, benchmarks, CI scripts and command-line programs print to the console.
    files: ['**/test/**', 'test/**', 'bench/**', '.ci/**', 'tools/*/src/cli.ts'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-unused-expressions': 'off' },
  },
);
